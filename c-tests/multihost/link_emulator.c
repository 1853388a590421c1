/* A network link with a delay and packet loss, for test hosts whose kernel has no netem
 * (tc's delay and loss). Two TAP devices, one end each: every Ethernet frame one end
 * sends comes out of the other DELAY_MS later, in order, unless it is lost.
 *
 *   link_emulator TAP_A TAP_B DELAY_MS PIDFILE
 *
 * makes the two TAP devices (then moved and configured by multihost/across_hosts.sh: one
 * into a test host as its eth0, the other onto the bridge), writes its pid to PIDFILE,
 * and forwards until killed. SIGUSR1 starts losing 5% of the frames (each direction, at
 * random), SIGUSR2 stops. A link taken down (ip link set ... down) drops what reaches it,
 * as a cable pulled out would. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

/* Links carry frames of up to 9000 bytes of payload (across_hosts.sh sets the MTU). */
enum { FRAME = 9216, SLOTS = 8192 };

struct frame {
  uint64_t due_ns;
  uint32_t size;
  unsigned char bytes[FRAME];
};

/* Frames in flight one way: a ring in arrival order (due times only grow). */
struct direction {
  int from, to;
  struct frame *ring;
  size_t head, count;
  uint64_t forwarded, lost, overflowed;
};

static volatile sig_atomic_t lossy;
static void start_loss(int s) { (void)s; lossy = 1; }
static void stop_loss(int s) { (void)s; lossy = 0; }

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int open_tap(const char *name) {
  int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK);
  if (fd < 0) {
    perror("/dev/net/tun");
    exit(77);
  }
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
  snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
  if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
    perror("TUNSETIFF");
    exit(77);
  }
  return fd;
}

/* Reads what the `from` end sent into the ring, each frame due `delay` later. */
static void take(struct direction *d, uint64_t delay_ns) {
  for (;;) {
    if (d->count == SLOTS) {
      /* A full ring drops the frame, as a full queue of a router would. */
      unsigned char scrap[FRAME];
      if (read(d->from, scrap, sizeof scrap) < 0) return;
      d->overflowed++;
      continue;
    }
    struct frame *f = &d->ring[(d->head + d->count) % SLOTS];
    ssize_t n = read(d->from, f->bytes, sizeof f->bytes);
    if (n <= 0) return;
    if (lossy && rand() % 100 < 5) {
      d->lost++;
      continue;
    }
    f->size = (uint32_t)n;
    f->due_ns = now_ns() + delay_ns;
    d->count++;
  }
}

/* Sends the frames that are due; the time until the next one (or -1). */
static int give(struct direction *d) {
  uint64_t now = now_ns();
  while (d->count > 0) {
    struct frame *f = &d->ring[d->head];
    if (f->due_ns > now) return (int)((f->due_ns - now + 999999) / 1000000);
    /* A link that is down (or a full device queue) takes nothing: the frame is gone. */
    if (write(d->to, f->bytes, f->size) < 0 && errno != EIO && errno != EAGAIN) {
      perror("write");
      exit(1);
    }
    d->forwarded++;
    d->head = (d->head + 1) % SLOTS;
    d->count--;
  }
  return -1;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s TAP_A TAP_B DELAY_MS PIDFILE\n", argv[0]);
    return 2;
  }
  uint64_t delay_ns = (uint64_t)(atof(argv[3]) * 1e6);
  int a = open_tap(argv[1]), b = open_tap(argv[2]);
  struct direction ab = {a, b, calloc(SLOTS, sizeof(struct frame)), 0, 0, 0, 0, 0};
  struct direction ba = {b, a, calloc(SLOTS, sizeof(struct frame)), 0, 0, 0, 0, 0};
  if (!ab.ring || !ba.ring) return 1;
  signal(SIGUSR1, start_loss);
  signal(SIGUSR2, stop_loss);
  srand((unsigned)now_ns());
  FILE *pidfile = fopen(argv[4], "w");
  if (!pidfile) return 1;
  fprintf(pidfile, "%d\n", (int)getpid());
  fclose(pidfile);
  for (;;) {
    int wait_ab = give(&ab), wait_ba = give(&ba);
    int wait = wait_ab < 0 ? wait_ba : wait_ba < 0 ? wait_ab : (wait_ab < wait_ba ? wait_ab : wait_ba);
    struct pollfd fds[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
    if (poll(fds, 2, wait) < 0 && errno != EINTR) {
      perror("poll");
      return 1;
    }
    take(&ab, delay_ns);
    take(&ba, delay_ns);
  }
}
