/* Specification tests: the seeded generator (xoshiro256**, seeded through
 * splitmix64) and the clocks. Seeded means deterministic, so the statistical
 * checks below are exact repeatable facts, not flaky samples. */
#include <time.h>

#include "bw_test.h"

/* ---- rand
 * ------------------------------------------------------------------------------
 */

static void same_seed_gives_the_same_sequence(void **state) {
  bw_rand_t a, b;
  int i;
  (void)state;
  bw_rand_seed(&a, 20260807);
  bw_rand_seed(&b, 20260807);
  for (i = 0; i < 1000; i++)
    assert_u64_eq(bw_rand_next(&a), bw_rand_next(&b));
  for (i = 0; i < 1000; i++)
    assert_dbl_eq(bw_rand_double(&a), bw_rand_double(&b), 0);
  for (i = 0; i < 1000; i++)
    assert_i64_eq(bw_rand_range(&a, -50, 50), bw_rand_range(&b, -50, 50));
}

static void different_seeds_give_different_sequences(void **state) {
  static const uint64_t seeds[] = {0, 1, 2, 42, UINT64_MAX};
  uint64_t first[5][16];
  size_t i, j, k;
  (void)state;
  for (i = 0; i < 5; i++) {
    bw_rand_t r;
    bw_rand_seed(&r, seeds[i]);
    for (k = 0; k < 16; k++)
      first[i][k] = bw_rand_next(&r);
  }
  /* No two seeds share any of their first 16 outputs (for 64-bit outputs a
   * single collision would be a 1-in-2^56 event). */
  for (i = 0; i < 5; i++)
    for (j = i + 1; j < 5; j++)
      for (k = 0; k < 16; k++) {
        size_t m;
        for (m = 0; m < 16; m++)
          if (first[i][k] == first[j][m]) {
            print_error("seeds %" PRIu64 " and %" PRIu64 " share an output\n",
                        seeds[i], seeds[j]);
            fail();
          }
      }
}

/* Seed 0 is a valid seed: the state is never all zero (xoshiro would then
 * output zeros forever). */
static void seed_zero_gives_a_valid_state(void **state) {
  bw_rand_t r;
  int i, zeros = 0;
  (void)state;
  bw_rand_seed(&r, 0);
  assert_true(r.s[0] != 0 || r.s[1] != 0 || r.s[2] != 0 || r.s[3] != 0);
  for (i = 0; i < 100; i++)
    if (bw_rand_next(&r) == 0) zeros++;
  assert_int_equal(zeros, 0);
}

/* xoshiro256** reference outputs for the state {1, 2, 3, 4}. */
static void next_is_xoshiro256starstar(void **state) {
  bw_rand_t r;
  (void)state;
  r.s[0] = 1;
  r.s[1] = 2;
  r.s[2] = 3;
  r.s[3] = 4;
  assert_u64_eq(bw_rand_next(&r), UINT64_C(11520));
  assert_u64_eq(bw_rand_next(&r), UINT64_C(0));
  assert_u64_eq(bw_rand_next(&r), UINT64_C(1509978240));
  assert_u64_eq(bw_rand_next(&r), UINT64_C(1215971899390074240));
  assert_u64_eq(bw_rand_next(&r), UINT64_C(0x10e0b61ce1009d80));
}

/* The state is four successive splitmix64 outputs of the seed, so a seed gives
 * the same stream in every version and on every platform. */
static void seeding_is_splitmix64(void **state) {
  bw_rand_t r;
  (void)state;
  bw_rand_seed(&r, 0);
  assert_u64_eq(r.s[0], UINT64_C(0xe220a8397b1dcdaf));
  assert_u64_eq(r.s[1], UINT64_C(0x6e789e6aa1b965f4));
  assert_u64_eq(r.s[2], UINT64_C(0x06c45d188009454f));
  assert_u64_eq(r.s[3], UINT64_C(0xf88bb8a8724c81ec));
  assert_u64_eq(bw_rand_next(&r), UINT64_C(0x99ec5f36cb75f2b4));
  bw_rand_seed(&r, 42);
  assert_u64_eq(bw_rand_next(&r), UINT64_C(0x15780b2e0c2ec716));
  assert_u64_eq(bw_rand_next(&r), UINT64_C(0x6104d9866d113a7e));
  assert_u64_eq(bw_rand_next(&r), UINT64_C(0xae17533239e499a1));
}

static void double_is_in_zero_one_with_53_bits(void **state) {
  bw_rand_t r;
  double sum = 0.0, lo = 1.0, hi = 0.0;
  int i;
  (void)state;
  bw_rand_seed(&r, 7);
  for (i = 0; i < 100000; i++) {
    double d = bw_rand_double(&r);
    double scaled = ldexp(d, 53);
    if (!(d >= 0.0 && d < 1.0)) {
      print_error("draw %d: %.17g is outside [0, 1)\n", i, d);
      fail();
    }
    if (scaled != floor(scaled)) { /* a multiple of 2^-53 */
      print_error("draw %d: %.17g is not a multiple of 2^-53\n", i, d);
      fail();
    }
    sum += d;
    if (d < lo) lo = d;
    if (d > hi) hi = d;
  }
  /* mean of 1e5 uniforms: sd 0.0009; 0.01 is over 10 sd */
  assert_true(fabs(sum / 100000.0 - 0.5) < 0.01);
  assert_true(lo < 0.001);
  assert_true(hi > 0.999);
}

static void range_is_inclusive_and_covers_every_value(void **state) {
  bw_rand_t r;
  int seen[7] = {0};
  int i;
  (void)state;
  bw_rand_seed(&r, 3);
  for (i = 0; i < 10000; i++) {
    int64_t v = bw_rand_range(&r, -3, 3);
    if (v < -3 || v > 3) {
      print_error("bw_rand_range(-3, 3) = %" PRId64 "\n", v);
      fail();
    }
    seen[v + 3]++;
  }
  for (i = 0; i < 7; i++)
    if (seen[i] == 0) {
      print_error("bw_rand_range(-3, 3) never gave %d\n", i - 3);
      fail();
    }
  for (i = 0; i < 100; i++)
    assert_i64_eq(bw_rand_range(&r, 5, 5), 5);
  for (i = 0; i < 1000; i++) {
    int64_t v = bw_rand_range(&r, 0, 1);
    assert_true(v == 0 || v == 1);
  }
}

static void range_handles_extreme_bounds(void **state) {
  bw_rand_t r;
  int i, negative = 0, positive = 0;
  (void)state;
  bw_rand_seed(&r, 11);
  for (i = 0; i < 1000; i++) {
    int64_t v = bw_rand_range(&r, INT64_MIN, INT64_MAX);
    if (v < 0) negative++;
    if (v > 0) positive++;
  }
  assert_true(negative > 400 && positive > 400);
  for (i = 0; i < 1000; i++) {
    int64_t v = bw_rand_range(&r, INT64_MAX - 2, INT64_MAX);
    assert_true(v >= INT64_MAX - 2);
  }
  for (i = 0; i < 1000; i++) {
    int64_t v = bw_rand_range(&r, INT64_MIN, INT64_MIN + 1);
    assert_true(v == INT64_MIN || v == INT64_MIN + 1);
  }
  /* A range of 2/3 of 2^64 values: a plain modulo would give the lower half
   * of the range 2/3 of the draws; uniform gives 1/2. */
  {
    const int64_t lo = INT64_MIN;
    const int64_t hi = INT64_C(3074457345618258601); /* lo + 0xAAAA...AA - 1 */
    const int64_t mid = lo + INT64_C(0x5555555555555555);
    int lower = 0;
    for (i = 0; i < 10000; i++)
      if (bw_rand_range(&r, lo, hi) < mid) lower++;
    if (!(lower > 4700 && lower < 5300)) {
      print_error("%d of 10000 draws in the lower half\n", lower);
      fail();
    }
  }
}

/* Pearson's chi-square over 10 bins of 10^5 draws (9 degrees of freedom: the
 * 99.9th percentile is 27.9; 40 is loose, and the seed makes it exact). */
static void range_is_roughly_uniform(void **state) {
  bw_rand_t r;
  long bins[10] = {0};
  double chi2 = 0.0, expected = 10000.0;
  int i;
  (void)state;
  bw_rand_seed(&r, 12345);
  for (i = 0; i < 100000; i++)
    bins[bw_rand_range(&r, 0, 9)]++;
  for (i = 0; i < 10; i++) {
    double d = (double)bins[i] - expected;
    chi2 += d * d / expected;
  }
  if (!(chi2 < 40.0)) {
    print_error("chi-square %.2f over 10 bins\n", chi2);
    fail();
  }
  /* and the top 4 bits of next() over 16 bins (15 dof: 99.9th pct 37.7) */
  {
    long top[16] = {0};
    chi2 = 0.0;
    expected = 100000.0 / 16.0;
    for (i = 0; i < 100000; i++)
      top[bw_rand_next(&r) >> 60]++;
    for (i = 0; i < 16; i++) {
      double d = (double)top[i] - expected;
      chi2 += d * d / expected;
    }
    if (!(chi2 < 50.0)) {
      print_error("chi-square %.2f over the top 4 bits\n", chi2);
      fail();
    }
  }
}

static void split_gives_a_distinct_reproducible_stream(void **state) {
  bw_rand_t p1, p2, c1, c2;
  int i, same = 0;
  (void)state;
  bw_rand_seed(&p1, 99);
  bw_rand_seed(&p2, 99);
  bw_rand_split(&p1, &c1);
  bw_rand_split(&p2, &c2);
  for (i = 0; i < 100; i++)
    assert_u64_eq(bw_rand_next(&c1), bw_rand_next(&c2));
  for (i = 0; i < 100; i++)
    assert_u64_eq(bw_rand_next(&p1), bw_rand_next(&p2));
  for (i = 0; i < 100; i++)
    if (bw_rand_next(&p1) == bw_rand_next(&c1)) same++;
  assert_int_equal(same, 0);
}

static void os_seeds_differ(void **state) {
  (void)state;
  assert_true(bw_rand_os_seed() != bw_rand_os_seed());
}

/* ---- clocks
 * -----------------------------------------------------------------------------
 */

static void manual_clock_moves_only_forward_when_told(void **state) {
  bw_clock_t *c = bw_clock_manual_new(5);
  (void)state;
  assert_non_null(c);
  assert_i64_eq(bw_clock_now(c), 5);
  assert_i64_eq(bw_clock_now(c), 5);
  bw_clock_manual_advance(c, 10);
  assert_i64_eq(bw_clock_now(c), 15);
  bw_clock_manual_advance(c, -3); /* ignored */
  assert_i64_eq(bw_clock_now(c), 15);
  bw_clock_manual_advance(c, 0);
  assert_i64_eq(bw_clock_now(c), 15);
  bw_clock_manual_set(c, 100);
  assert_i64_eq(bw_clock_now(c), 100);
  bw_clock_manual_set(c, 50); /* backwards: ignored */
  assert_i64_eq(bw_clock_now(c), 100);
  bw_clock_manual_set(c, 100);
  assert_i64_eq(bw_clock_now(c), 100);
  bw_clock_manual_advance(c, INT64_C(3600) * BW_NS_PER_S);
  assert_i64_eq(bw_clock_now(c), 100 + INT64_C(3600000000000));
  bw_clock_free(c);

  c = bw_clock_manual_new(-7); /* any start, even negative */
  assert_non_null(c);
  assert_i64_eq(bw_clock_now(c), -7);
  bw_clock_manual_advance(c, 7);
  assert_i64_eq(bw_clock_now(c), 0);
  bw_clock_free(c);
}

static void manual_clocks_are_independent(void **state) {
  bw_clock_t *a = bw_clock_manual_new(0);
  bw_clock_t *b = bw_clock_manual_new(0);
  (void)state;
  bw_clock_manual_advance(a, 1000);
  assert_i64_eq(bw_clock_now(a), 1000);
  assert_i64_eq(bw_clock_now(b), 0);
  bw_clock_free(a);
  bw_clock_free(b);
}

static void system_clocks_never_go_back(void **state) {
  const bw_clock_t *mono = bw_clock_monotonic();
  const bw_clock_t *coarse = bw_clock_monotonic_coarse();
  int64_t prev_m, prev_c;
  int i;
  (void)state;
  assert_non_null(mono);
  assert_non_null(coarse);
  prev_m = bw_clock_now(mono);
  prev_c = bw_clock_now(coarse);
  for (i = 0; i < 100000; i++) {
    int64_t m = bw_clock_now(mono), c = bw_clock_now(coarse);
    if (m < prev_m || c < prev_c) {
      print_error("clock went back: %" PRId64 " < %" PRId64 " or %" PRId64
                  " < %" PRId64 "\n",
                  m, prev_m, c, prev_c);
      fail();
    }
    prev_m = m;
    prev_c = c;
  }
  assert_true(prev_m > 0);
}

/* The core's monotonic clock is CLOCK_MONOTONIC: a reading falls between
 * two of libc's. */
static void the_monotonic_clock_reads_between_two_of_libcs(void **state) {
  struct timespec a, z;
  int64_t v, ta, tz;
  (void)state;
  assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &a), 0);
  v = bw_clock_now(bw_clock_monotonic());
  assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &z), 0);
  ta = (int64_t)a.tv_sec * BW_NS_PER_S + a.tv_nsec;
  tz = (int64_t)z.tv_sec * BW_NS_PER_S + z.tv_nsec;
  assert_true(ta <= v && v <= tz);
}

static void realtime_is_wall_time_since_the_epoch(void **state) {
  const bw_clock_t *rt = bw_clock_realtime();
  int64_t now;
  (void)state;
  assert_non_null(rt);
  now = bw_clock_now(rt);
  /* after 2020-01-01T00:00:00Z, before 2100-01-01T00:00:00Z */
  assert_true(now > INT64_C(1577836800) * BW_NS_PER_S);
  assert_true(now < INT64_C(4102444800) * BW_NS_PER_S);
}

static void static_clocks_ignore_manual_operations_and_free(void **state) {
  const bw_clock_t *mono = bw_clock_monotonic();
  (void)state;
  /* no-ops on clocks that are not manual */
  bw_clock_manual_advance((bw_clock_t *)(uintptr_t)mono, BW_NS_PER_S);
  bw_clock_manual_set((bw_clock_t *)(uintptr_t)mono, INT64_MAX);
  bw_clock_free((bw_clock_t *)(uintptr_t)mono);
  bw_clock_free((bw_clock_t *)(uintptr_t)bw_clock_realtime());
  bw_clock_free(NULL);
  assert_ptr_equal(bw_clock_monotonic(), mono);
  assert_true(bw_clock_now(mono) < INT64_MAX);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(same_seed_gives_the_same_sequence),
      cmocka_unit_test(different_seeds_give_different_sequences),
      cmocka_unit_test(seed_zero_gives_a_valid_state),
      cmocka_unit_test(next_is_xoshiro256starstar),
      cmocka_unit_test(seeding_is_splitmix64),
      cmocka_unit_test(double_is_in_zero_one_with_53_bits),
      cmocka_unit_test(range_is_inclusive_and_covers_every_value),
      cmocka_unit_test(range_handles_extreme_bounds),
      cmocka_unit_test(range_is_roughly_uniform),
      cmocka_unit_test(split_gives_a_distinct_reproducible_stream),
      cmocka_unit_test(os_seeds_differ),
      cmocka_unit_test(manual_clock_moves_only_forward_when_told),
      cmocka_unit_test(manual_clocks_are_independent),
      cmocka_unit_test(system_clocks_never_go_back),
      cmocka_unit_test(the_monotonic_clock_reads_between_two_of_libcs),
      cmocka_unit_test(realtime_is_wall_time_since_the_epoch),
      cmocka_unit_test(static_clocks_ignore_manual_operations_and_free),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
