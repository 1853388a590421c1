#!/usr/bin/env bash
# run-llvm-offload-tests.sh - measuring tool, not part of this project's tests.
#
# Runs LLVM's own OpenMP offload lit tests (offload/test/{api,mapping,env,
# offloading}/...) against a libomptarget on the x86_64 host-offload target,
# without lit: each test's RUN lines are expanded with a small substitution
# table modelled on LLVM's offload/test/lit.cfg and run with bash.
#
# LLVM's test sources are NOT in this repository. They were obtained one file
# at a time from a stored index of the public llvm/llvm-project repository
# (GitHub), saved to a local folder keeping the offload/test/ layout
# (api/, mapping/, ..., Inputs/). The script is therefore a measuring tool
# only; it is not called by scripts/test.sh.
#
# Usage: run-llvm-offload-tests.sh [--clang 19|22] [--remote SERVER] [--save FILE]
#                                  [--compare FILE] [--only FOLDER] TESTDIR LIBDIR [LOGDIR]
#   --clang N  the LLVM release the tests are built for (default 19): clang-N,
#            LLVM N's FileCheck and not, the binaries then load libomptarget.so.N.1.
#            22: clang-22 and llvm-22-tools (FileCheck, not), clang-tools-22
#            (clang-linker-wrapper) and llvm-22 (llvm-offload-binary), and libomp-22-dev's
#            omp.h and libomp.so. libomp-22-dev conflicts with the libomp-19-dev that the
#            clang-19 mode needs, so it is not installed but unpacked into
#            _deps/libomp-22-dev of this repository (OFFLOAD_LIBOMP22_ROOT to use another
#            folder); when it is missing this script unpacks it there itself, as
#            scripts/common.sh's fetch_libomp22 does (apt-get download libomp-22-dev;
#            dpkg-deb -x). Debian's libomp-22-dev has no libomp.so.5 of its own: it depends
#            on libomp5-19, whose libomp.so.5 both modes' binaries run with.
#   --remote SERVER  run each test binary as the application rank of an MPI job
#            beside one device server (SERVER, e.g. _install/bin/offload-mpi-device),
#            with OFFLOAD_PLATFORMS=mpi, so that the remote device is OpenMP's only
#            device (device 0, the default); mpirun --enable-recovery, so that a lost
#            server is the application's error to report
#   --save FILE  write the names of the tests that passed to FILE, one a line (the
#            lists of what LLVM's own libraries pass are kept in
#            scripts/llvm-offload-tests/passes-llvmN.txt)
#   --compare FILE  after the run, name every test FILE lists (lines starting with #
#            are comments) that did not pass here ("MISSING name"), and exit 1 if any
#   --only FOLDER  run the tests of TESTDIR/FOLDER alone (e.g. ompt)
#   --feature NAME  count lit feature NAME as present too (e.g. gpu: the OMPT tests LLVM
#            marks for GPUs, run on the host target to compare two libraries)
#   TESTDIR  folder holding the downloaded test files (offload/test of LLVM's tree: the
#            OMPT tests include openmp/runtime/test/ompt/callback.h from ../../openmp)
#   LIBDIR   folder put on LD_LIBRARY_PATH when the test binaries run
#            (e.g. /usr/lib/llvm-19/lib, /usr/lib/llvm-22/lib or /work/main/_install/lib)
#   LOGDIR   where per-test scripts/logs go (default: a fresh temp folder)
# Prints "PASS|FAIL|SKIP name (reason)" per test and a summary line.
# Needs clang-19 and FileCheck/not (Debian: llvm-19-tools), or their LLVM 22 twins.

set -u
SERVER="" RELEASE=19 SAVE="" COMPARE="" ONLY="" EXTRA_FEATURES=""
while [ $# -gt 0 ]; do
  case "$1" in
    --remote) SERVER=$(cd "$(dirname "${2:?server binary}")" && pwd)/$(basename "$2"); shift 2;;
    --clang) RELEASE=${2:?release}; shift 2;;
    --save) SAVE=${2:?file}; shift 2;;
    --only) ONLY=${2:?folder}; shift 2;;
    --feature) EXTRA_FEATURES+=" ${2:?feature}"; shift 2;;
    --compare) COMPARE=$(cd "$(dirname "${2:?file}")" && pwd)/$(basename "$2"); shift 2;;
    --) shift; break;;
    -*) echo "unknown option $1" >&2; exit 2;;
    *) break;;
  esac
done
case "$RELEASE" in 19|22) ;; *) echo "--clang: 19 or 22, not $RELEASE" >&2; exit 2;; esac
[ -z "$COMPARE" ] || [ -f "$COMPARE" ] || { echo "no list $COMPARE" >&2; exit 2; }
TESTDIR=$(cd "${1:?test folder}" && pwd)
LIBDIR=$(cd "${2:?library folder}" && pwd)
LOGDIR=${3:-$(mktemp -d /tmp/llvm-offload-run.XXXXXX)}
mkdir -p "$LOGDIR" && LOGDIR=$(cd "$LOGDIR" && pwd)
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

LLVM=/usr/lib/llvm-$RELEASE
T=x86_64-pc-linux-gnu                      # the one target we run
CC=clang-$RELEASE CXX=clang++-$RELEASE
OMPFLAGS="-fopenmp -pthread"               # %openmp_flags
# lit.cfg's %flags: the tests' folder, omp.h's folder, the libraries' folders (LLVM's
# libomptarget.so to link with; the binaries load LIBDIR's).
HOSTRTL=$LLVM/lib                          # where libomp.so is
RTLPATH=""                                 # added to LD_LIBRARY_PATH after LIBDIR
OMPINC=$LLVM/lib/clang/$RELEASE/include    # where omp.h is
if [ "$RELEASE" = 22 ] && { [ ! -f "$OMPINC/omp.h" ] || [ ! -e "$HOSTRTL/libomp.so" ]; }; then
  # libomp-22-dev is not installed (it conflicts with libomp-19-dev): its unpacked copy.
  LIBOMP22=${OFFLOAD_LIBOMP22_ROOT:-$ROOT/_deps/libomp-22-dev}
  HOSTRTL=$LIBOMP22/usr/lib/llvm-22/lib
  OMPINC=$HOSTRTL/clang/22/include
  RTLPATH=":$HOSTRTL"                      # (lit puts the host runtime's folder there)
  if [ ! -f "$OMPINC/omp.h" ] || [ ! -e "$HOSTRTL/libomp.so" ]; then
    if [ -n "${OFFLOAD_LIBOMP22_ROOT:-}" ]; then
      echo "no libomp-22-dev in $LIBOMP22 (OFFLOAD_LIBOMP22_ROOT)" >&2; exit 2
    fi
    echo "unpacking libomp-22-dev into $LIBOMP22 (apt-get download, dpkg-deb -x)" >&2
    ( source "$ROOT/scripts/common.sh" && fetch_libomp22 ) >&2 || exit 2
  fi
fi
FLAGS="-I $TESTDIR -I $OMPINC -L $LLVM/lib -nogpulib"  # %flags
[ "$HOSTRTL" = "$LLVM/lib" ] || FLAGS="-I $TESTDIR -I $OMPINC -L $HOSTRTL -L $LLVM/lib -nogpulib"
DEVRTL=""                                  # lit.cfg's add_libraries()
# (LLVM 19 links the host target's programs with libomptarget.devicertl.a; LLVM 22
# builds its device runtime for GPU targets only: Debian's llvm-22 ships none.)
[ -f "$LLVM/lib/libomptarget.devicertl.a" ] && DEVRTL=" $LLVM/lib/libomptarget.devicertl.a"
for tool in "$CC" "$CXX" "$LLVM/bin/FileCheck" "$LLVM/bin/not"; do
  command -v "$tool" >/dev/null || { echo "missing $tool (LLVM $RELEASE)" >&2; exit 2; }
done
FC="$LLVM/bin/FileCheck"
NOT="$LLVM/bin/not"
# lit features the x86_64 host target has (see lit.cfg: the target name,
# unified_shared_memory is assumed for non-GPU targets, host).
FEATURES="x86_64-pc-linux-gnu x86_64-unknown-linux-gnu unified_shared_memory host linux clang ompt$EXTRA_FEATURES"

has_feature() { case " $FEATURES " in *" $1 "*) return 0;; esac; return 1; }

# Evaluate one lit boolean expression (features, !, &&, ||, parentheses).
eval_expr() {
  local e="$1" out="" tok
  [ "$e" = "*" ] && return 0
  e=$(sed -E 's/(&&|\|\||!|\(|\))/ \1 /g' <<<"$e")
  for tok in $e; do
    case "$tok" in
      '&&'|'||'|'!'|'('|')') out+=" $tok";;
      *) if has_feature "$tok"; then out+=" 1"; else out+=" 0"; fi;;
    esac
  done
  (( $out ))
}

# Values of all "KEY:" directive lines, split on commas, one per line.
directive() { grep -E "(//|!) *$2:" "$1" | sed -E "s/.*$2://" | tr ',' '\n' | sed -E 's/^ +//; s/ +$//' | grep -v '^$'; }

# RUN lines, joined where they end in a backslash.
run_lines() {
  grep -E '(//|!) *RUN:' "$1" | sed -E 's/.*RUN: ?//' |
    awk '{ if (sub(/\\[ \t]*$/, "")) { acc = acc $0 } else { print acc $0; acc = "" } }
         END { if (acc != "") print acc }'
}

# Substitution table (order matters; applied until nothing changes).
B='([^A-Za-z0-9_-]|$)'
expand() {
  local l="$1" prev="" src="$2" tmp="$3" i=0
  l=$(sed -E "s/%([a-z-]+)-x86_64-unknown-linux-gnu$B/%\1-$T\2/g" <<<"$l")
  while [ "$l" != "$prev" ] && [ $i -lt 10 ]; do
    prev=$l; i=$((i+1))
    l=$(sed -E \
      -e "s/%fcheck-plain-generic$B/%fcheck_bin\1/g" \
      -e "s/%fcheck-generic$B/%fcheck-$T\1/g" \
      -e "s/%libomptarget-compilexxx-generic-force-usm$B/%libomptarget-compilexxx-force-usm-$T\1/g" \
      -e "s/%(libomptarget-[a-z-]+|clangxx|clang|flang)-generic$B/%\1-$T\2/g" \
      -e "s/%([A-Za-z0-9_-]+)-$T-(JIT-)?LTO$B/true ignored-command\3/g" \
      -e "s/%libomptarget-(compilexx|compile|compileoptxx|compileopt)-run-and-check-$T$B/%libomptarget-\1-and-run-$T | %fcheck-$T\2/g" \
      -e "s/%libomptarget-(compilexx|compile|compileoptxx|compileopt)-and-run-$T$B/%libomptarget-\1-$T \&\& %libomptarget-run-$T\2/g" \
      -e "s/%libomptarget-compilexxx-force-usm-$T$B/%clangxxx-force-usm-$T %s -o %t%devrtl\1/g" \
      -e "s/%libomptarget-compilexx-$T$B/%clangxx-$T %s -o %t%devrtl\1/g" \
      -e "s/%libomptarget-compile-$T$B/%clang-$T %s -o %t%devrtl\1/g" \
      -e "s/%libomptarget-compileoptxx-$T$B/%clangxx-$T -O3 %s -o %t%devrtl\1/g" \
      -e "s/%libomptarget-compileopt-$T$B/%clang-$T -O3 %s -o %t%devrtl\1/g" \
      -e "s/%libomptarget-run-fail-$T$B/%not --crash %run %t\1/g" \
      -e "s/%libomptarget-run-$T$B/%run %t\1/g" \
      -e "s/%clangxxx-force-usm-$T$B/%clangxx %openmp_flags -fopenmp-force-usm %flags -fopenmp-targets=$T\1/g" \
      -e "s/%clangxx-$T$B/%clangxx %openmp_flags %flags -fopenmp-targets=$T\1/g" \
      -e "s/%clang-$T$B/%clang %openmp_flags %flags -fopenmp-targets=$T\1/g" \
      -e "s/%fcheck-$T$B/%fcheck_bin %s\1/g" \
      <<<"$l")
    # Every other target's substitutions expand to "true ignored-command" (not echo:
    # piped into another, it would die of SIGPIPE at random under pipefail).
    l=$(sed -E "s/%(libomptarget-[a-z-]+|clangxx|clang|fcheck|flang)-(nvptx64|amdgcn|aarch64|powerpc64|powerpc64le|s390x|x86_64)[A-Za-z0-9_-]*/true ignored-command/g" <<<"$l")
  done
  l=${l//%clangxx/$CXX}; l=${l//%clang/$CC}
  l=${l//%openmp_flags/$OMPFLAGS}; l=${l//%cuda_flags/}; l=${l//%flags_clang/}
  l=${l//%flags/$FLAGS}; l=${l//%fcheck_bin/$FC}; l=${l//%devrtl/$DEVRTL}; l=${l//%not/$NOT}
  l=${l//%target_triple/$T}; l=${l//%run /${RUN:+$RUN }}
  l=${l//%t/$tmp}; l=${l//%s/$src}; l=${l//%S/$(dirname "$src")}
  l=${l//%p/$(dirname "$src")}; l=${l//%T/$(dirname "$tmp")}
  printf '%s\n' "$l"
}

# In remote mode every run of a test binary goes through this launcher: the binary is
# the last rank, the server the first. The application's own exit (a status, or the
# signal that ended it) is the launcher's, as `not --crash` and pipelines expect.
RUN=""
if [ -n "$SERVER" ]; then
  RUN=$LOGDIR/remote-run.sh
  cat > "$RUN" <<'EOS'
#!/usr/bin/env bash
# mpirun forwards a rank's stdout and stderr apart, losing their order: the
# application writes to FIFOs this launcher copies out (one where stdout and stderr
# are one file here, 2>&1), so the output is as a direct run's. (An -x option belongs to
# the program it precedes in mpirun's command line, not to the whole job.)
: "${REMOTE_SERVER:?the device server to start beside the application}"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkfifo "$dir/out" "$dir/err"
cat "$dir/out" &
if [ "$(readlink /proc/$$/fd/1)" = "$(readlink /proc/$$/fd/2)" ]; then
  redirect='exec > "$0/out" 2>&1'
else
  cat "$dir/err" >&2 &
  redirect='exec > "$0/out" 2> "$0/err"'
fi
mpirun --allow-run-as-root --oversubscribe --bind-to none --enable-recovery --mca btl self,vader \
  -np 1 "$REMOTE_SERVER" : -np 1 -x OFFLOAD_PLATFORMS=mpi \
  bash -c "( $redirect; \"\$@\" ); echo \$? > \"\$0/status\"" "$dir" "$@" < /dev/null
# A FIFO opened read-write never blocks: a copier still waiting for a writer (the
# application never started) sees one come and go, and ends.
exec 3<> "$dir/out" 4<> "$dir/err"; exec 3>&- 4>&-
wait
rc=$(cat "$dir/status" 2>/dev/null)
[ -n "$rc" ] || exit 125
[ "$rc" -gt 128 ] && { rm -rf "$dir"; trap - EXIT; kill -$((rc - 128)) $$; }
exit "$rc"
EOS
  chmod +x "$RUN"
fi

pass=0 fail=0 skip=0
: > "$LOGDIR/results.txt"
while IFS= read -r f; do
  name=${f#$TESTDIR/}
  say() { echo "$1 $name${2:+ ($2)}" | tee -a "$LOGDIR/results.txt"; }
  case "$f" in *.f90) say SKIP "Fortran, no flang"; skip=$((skip+1)); continue;; esac
  mapfile -t runs < <(run_lines "$f")
  if [ ${#runs[@]} -eq 0 ]; then say SKIP "no RUN lines"; skip=$((skip+1)); continue; fi
  reason=""
  while IFS= read -r r; do eval_expr "$r" || { reason="REQUIRES: $r"; break; }; done < <(directive "$f" REQUIRES)
  [ -z "$reason" ] && while IFS= read -r u; do eval_expr "$u" && { reason="UNSUPPORTED: $u"; break; }; done < <(directive "$f" UNSUPPORTED)
  if [ -z "$reason" ] && printf '%s\n' "${runs[@]}" | grep -qE '%(libomptarget-compile-fortran|flang)'; then reason="Fortran, no flang"; fi
  if [ -n "$reason" ]; then say SKIP "$reason"; skip=$((skip+1)); continue; fi
  xfail=0
  while IFS= read -r x; do eval_expr "$x" && xfail=1; done < <(directive "$f" XFAIL)

  # One bash script per test: every RUN line must succeed (pipefail as lit).
  base=$LOGDIR/${name//\//__}; tmp=$base.tmp; script=$base.sh; log=$base.log
  { echo "set -o pipefail"; echo "cd '$LOGDIR'"
    for r in "${runs[@]}"; do
      echo "echo '+ '$(printf '%q' "$(expand "$r" "$f" "$tmp")") >&2"
      echo "$(expand "$r" "$f" "$tmp") || exit \$?"
    done; } > "$script"
  env -u OMP_TARGET_OFFLOAD LD_LIBRARY_PATH="$LIBDIR$RTLPATH" PATH="$LLVM/bin:$PATH" REMOTE_SERVER="$SERVER" \
    timeout 60 bash "$script" < /dev/null > "$log" 2>&1
  rc=$?
  if [ $rc -eq 124 ]; then ok=1; why="timeout 60 s"; elif [ $rc -ne 0 ]; then ok=1; why="exit $rc"; else ok=0; why=""; fi
  if [ $xfail -eq 1 ]; then
    if [ $ok -ne 0 ]; then say PASS "expected failure (XFAIL)"; pass=$((pass+1))
    else say FAIL "unexpectedly passed (XFAIL)"; fail=$((fail+1)); fi
  elif [ $ok -eq 0 ]; then say PASS; pass=$((pass+1))
  else say FAIL "$why, log $log"; fail=$((fail+1)); fi
done < <(find "$TESTDIR${ONLY:+/$ONLY}" -path "$TESTDIR/Inputs" -prune -o -type f \( -name '*.c' -o -name '*.cpp' -o -name '*.cc' -o -name '*.f90' \) -print | sort)
echo "passed $pass, failed $fail, skipped $skip"
if [ -n "$SAVE" ]; then
  sources=""
  [ -f "$TESTDIR/SOURCES.txt" ] && sources=" (SOURCES.txt sha256 $(sha256sum "$TESTDIR/SOURCES.txt" | cut -c1-16))"
  options="--clang $RELEASE${SERVER:+ --remote}${ONLY:+ --only $ONLY}"
  for f in $EXTRA_FEATURES; do options+=" --feature $f"; done
  { echo "# LLVM's offload tests that passed: run-llvm-offload-tests.sh $options,"
    echo "# binaries built by $CC, run on the libomptarget.so.$RELEASE.1 in $LIBDIR:"
    echo "# $pass passed, $fail failed, $skip skipped of the test files$sources"
    grep '^PASS ' "$LOGDIR/results.txt" | cut -d' ' -f2 | sort; } > "$SAVE"
fi
if [ -n "$COMPARE" ]; then
  # The tests the list names that did not pass in this run.
  missing=$(grep -v -e '^#' -e '^$' "$COMPARE" | sort |
    comm -23 - <(grep '^PASS ' "$LOGDIR/results.txt" | cut -d' ' -f2 | sort))
  listed=$(grep -c -v -e '^#' -e '^$' "$COMPARE")
  if [ -n "$missing" ]; then
    sed 's/^/MISSING /' <<<"$missing"
    echo "of the $listed tests $(basename "$COMPARE") lists, $(wc -l <<<"$missing") did not pass"
    exit 1
  fi
  echo "all $listed tests $(basename "$COMPARE") lists passed"
fi
