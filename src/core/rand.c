/* xoshiro256** seeded through splitmix64 (Blackman & Vigna's published
 * algorithms, written from their description). */
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

static uint64_t bw__splitmix64(uint64_t *x) {
  uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

static inline uint64_t bw__rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

void bw_rand_seed(bw_rand_t *r, uint64_t seed) {
  uint64_t x = seed;
  for (int i = 0; i < 4; i++)
    r->s[i] = bw__splitmix64(&x);
  /* splitmix64 never yields four zero words in a row, but be certain: the
   * all-zero state is the one xoshiro cannot leave. */
  if ((r->s[0] | r->s[1] | r->s[2] | r->s[3]) == 0) r->s[0] = 1;
}

uint64_t bw_rand_next(bw_rand_t *r) {
  uint64_t *s = r->s;
  uint64_t result = bw__rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = bw__rotl(s[3], 45);
  return result;
}

double bw_rand_double(bw_rand_t *r) {
  return (double)(bw_rand_next(r) >> 11) * 0x1.0p-53;
}

int64_t bw_rand_range(bw_rand_t *r, int64_t lo, int64_t hi) {
  uint64_t span;
  if (hi <= lo) return lo;
  span = (uint64_t)hi - (uint64_t)lo + 1; /* 0 means the full 2^64 range */
  if (span == 0) return (int64_t)bw_rand_next(r);
#if defined(__SIZEOF_INT128__)
  {
    /* Multiply-and-shift (Lemire, "Fast random integer generation in an
     * interval", 2019): the high 64 bits of x * span are uniform in
     * [0, span) once the few low products below 2^64 mod span are drawn
     * again. The division that finds that threshold runs only when a low
     * product is small enough to need the test: almost never. */
    __extension__ typedef unsigned __int128 bw__u128;
    uint64_t x = bw_rand_next(r);
    bw__u128 m = (bw__u128)x * span;
    uint64_t low = (uint64_t)m;
    if (BW__UNLIKELY(low < span)) {
      uint64_t threshold = (0 - span) % span;
      while (low < threshold) {
        x = bw_rand_next(r);
        m = (bw__u128)x * span;
        low = (uint64_t)m;
      }
    }
    return (int64_t)((uint64_t)lo + (uint64_t)(m >> 64));
  }
#else
  {
    /* Rejection sampling: values below 2^64 mod span would be
     * over-represented by the modulo, so they are drawn again. */
    uint64_t threshold = (0 - span) % span, x;
    do {
      x = bw_rand_next(r);
    } while (x < threshold);
    return (int64_t)((uint64_t)lo + x % span);
  }
#endif
}

void bw_rand_split(bw_rand_t *parent, bw_rand_t *child) {
  static const uint64_t jump[] = {
      UINT64_C(0x180ec6d33cfd0aba), UINT64_C(0xd5a61266f0c9392c),
      UINT64_C(0xa9582618e03fc9aa), UINT64_C(0x39abdc4529b1661c)};
  uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  *child = *parent;
  for (int i = 0; i < 4; i++) {
    for (int b = 0; b < 64; b++) {
      if (jump[i] & (UINT64_C(1) << b)) {
        s0 ^= parent->s[0];
        s1 ^= parent->s[1];
        s2 ^= parent->s[2];
        s3 ^= parent->s[3];
      }
      (void)bw_rand_next(parent);
    }
  }
  parent->s[0] = s0;
  parent->s[1] = s1;
  parent->s[2] = s2;
  parent->s[3] = s3;
}

uint64_t bw_rand_os_seed(void) {
  uint64_t seed = 0;
  int fd = open("/dev/urandom", O_RDONLY);
  if (fd >= 0) {
    ssize_t n = read(fd, &seed, sizeof(seed));
    close(fd);
    if (n == (ssize_t)sizeof(seed)) return seed;
  }
  /* No urandom: mix time and address bits; weak but never constant. */
  {
    struct timespec ts;
    uint64_t x;
    clock_gettime(CLOCK_REALTIME, &ts);
    x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
        (uint64_t)(uintptr_t)&seed;
    return bw__splitmix64(&x);
  }
}
