#!/usr/bin/env bash
# pkgconfig_consumer.sh shared|static CC SOURCE WORKDIR
# Builds SOURCE the way a Makefile user would, with flags from `pkg-config liboffload`
# (PKG_CONFIG_PATH names the installed package), checks what the program links
# against, and runs it.
set -euo pipefail
mode=$1 cc=$2 source=$3 workdir=$4
mkdir -p "$workdir"
app="$workdir/consumer_pkgconfig_$mode"
warnings=(-std=c11 -Wall -Wextra -Werror -pedantic)

pkg-config --exists 'liboffload >= 0.1' || { echo "pkg-config finds no liboffload >= 0.1"; exit 1; }
echo "liboffload $(pkg-config --modversion liboffload) from $(pkg-config --variable=libdir liboffload)"

case $mode in
shared)
  # shellcheck disable=SC2046
  "$cc" "${warnings[@]}" "$source" -o "$app" $(pkg-config --cflags --libs liboffload) \
    -Wl,-rpath,"$(pkg-config --variable=libdir liboffload)"
  readelf -d "$app" | grep -q 'NEEDED.*\[liboffload\.so\.0\]' \
    || { echo "$app does not need liboffload.so.0"; exit 1; }
  ;;
static)
  # --static adds Libs.private; -Bstatic makes the linker take liboffload.a although
  # liboffload.so lies beside it.
  libs=$(pkg-config --static --libs liboffload)
  libs=${libs/-loffload/-Wl,-Bstatic -loffload -Wl,-Bdynamic}
  # shellcheck disable=SC2046,SC2086
  "$cc" "${warnings[@]}" "$source" -o "$app" $(pkg-config --cflags liboffload) $libs
  if readelf -d "$app" | grep -q 'NEEDED.*liboffload'; then
    echo "$app needs a shared liboffload; it should be static"; exit 1
  fi
  ;;
*) echo "usage: $0 shared|static CC SOURCE WORKDIR"; exit 2 ;;
esac
"$app"
