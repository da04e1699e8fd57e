/* Statistical specification of the jitter kinds: 10^5 draws from fixed seeds,
 * compared with the documented distributions. Every tolerance is at least
 * five standard errors of the statistic it bounds, so the checks hold for
 * any seed, yet each would catch a wrong range, a wrong mean or a generator
 * shared between iterators. The seeds are fixed, so a run is reproducible. */
#include "bw_test.h"

#define N 100000
#define T0 BWT_T0_NS
#define MS BW_NS_PER_MS

static bw_retry_policy_t *policy_at(bw_jitter_t jitter, int64_t base,
                                    int64_t min, int64_t max, int64_t jms,
                                    uint64_t seed, const char *file, int line) {
  bw_retry_config_t c;
  bw_error_t err;
  bw_retry_policy_t *p;
  bw_retry_config_init(&c);
  c.backoff = BW_BACKOFF_EXPONENTIAL;
  c.jitter = jitter;
  c.base_ms = base;
  c.min_ms = min;
  c.max_ms = max;
  c.jitter_ms = jms;
  c.max_attempts = 8;
  c.seed = seed;
  p = bw_retry_policy_new(&c, &err);
  if (p == NULL) {
    print_error("bw_retry_policy_new: %s\n", err.message);
    _fail(file, line);
  }
  return p;
}
#define policy(j, base, min, max, jms, seed) \
  policy_at((j), (base), (min), (max), (jms), (seed), __FILE__, __LINE__)

typedef struct summary_s {
  double mean;
  int64_t lo, hi;
} summary_t;

/* N first-retry delays from one generator. */
static summary_t first_delays(const bw_retry_policy_t *p, uint64_t seed,
                              int64_t *out) {
  summary_t s = {0, INT64_MAX, INT64_MIN};
  bw_rand_t g;
  double sum = 0;
  int i;
  bw_rand_seed(&g, seed);
  for (i = 0; i < N; i++) {
    int64_t d = bw_retry_delay_ms(p, 1, &g, NULL);
    if (out != NULL) out[i] = d;
    sum += (double)d;
    if (d < s.lo) s.lo = d;
    if (d > s.hi) s.hi = d;
  }
  s.mean = sum / N;
  return s;
}

static void no_jitter_is_the_curve_itself(void **state) {
  bw_retry_policy_t *p = policy(BW_JITTER_NONE, 1000, 0, 30000, 0, 1);
  summary_t s = first_delays(p, 1, NULL);
  (void)state;
  assert_i64_eq(s.lo, 1000);
  assert_i64_eq(s.hi, 1000);
  bw_retry_policy_free(p);
}

/* Full jitter: uniform on [0, d] — mean d/2, and every tenth of the range
 * holds a tenth of the draws. */
static void full_jitter_is_uniform_on_zero_to_d(void **state) {
  bw_retry_policy_t *p = policy(BW_JITTER_FULL, 1000, 0, 30000, 0, 1);
  int64_t *d = malloc(sizeof(int64_t) * N);
  long bins[10] = {0};
  summary_t s;
  int i;
  (void)state;
  assert_non_null(d);
  s = first_delays(p, 101, d);
  assert_true(s.lo >= 0 && s.hi <= 1000);
  assert_true(s.lo <= 2 && s.hi >= 998);
  assert_dbl_eq(s.mean, 500.0, 5.0); /* sd 289, SE 0.9 */
  for (i = 0; i < N; i++)
    bins[d[i] >= 1000 ? 9 : d[i] / 100]++;
  for (i = 0; i < 10; i++) /* ~10^4 each, sd 95 */
    assert_true(bins[i] > 9500 && bins[i] < 10600);
  free(d);
  bw_retry_policy_free(p);
}

/* With min_ms, full jitter draws uniformly from [min_ms, d]. */
static void full_jitter_with_a_floor_is_uniform_above_it(void **state) {
  bw_retry_policy_t *p = policy(BW_JITTER_FULL, 1000, 200, 30000, 0, 1);
  summary_t s = first_delays(p, 102, NULL);
  (void)state;
  assert_true(s.lo >= 200 && s.hi <= 1000);
  assert_true(s.lo <= 202 && s.hi >= 998);
  assert_dbl_eq(s.mean, 600.0, 4.0); /* sd 231, SE 0.7 */
  bw_retry_policy_free(p);
}

/* Equal jitter: d/2 + uniform [0, d/2] — mean 3d/4. */
static void equal_jitter_averages_three_quarters(void **state) {
  bw_retry_policy_t *p = policy(BW_JITTER_EQUAL, 1000, 0, 30000, 0, 1);
  summary_t s = first_delays(p, 103, NULL);
  (void)state;
  assert_true(s.lo >= 500 && s.hi <= 1000);
  assert_true(s.lo <= 501 && s.hi >= 999);
  assert_dbl_eq(s.mean, 750.0, 3.0); /* sd 145, SE 0.46 */
  bw_retry_policy_free(p);
}

/* Additive jitter: d + uniform [0, jitter_ms] — mean d + j/2. */
static void additive_jitter_averages_d_plus_half_the_range(void **state) {
  bw_retry_policy_t *p = policy(BW_JITTER_ADDITIVE, 1000, 0, 30000, 400, 1);
  summary_t s = first_delays(p, 104, NULL);
  (void)state;
  assert_true(s.lo >= 1000 && s.hi <= 1400);
  assert_true(s.lo <= 1001 && s.hi >= 1399);
  assert_dbl_eq(s.mean, 1200.0, 2.0); /* sd 116, SE 0.37 */
  bw_retry_policy_free(p);
}

/* Additive jitter near the cap: draws above max_ms are held at max_ms. */
static void additive_jitter_never_passes_the_cap(void **state) {
  bw_retry_policy_t *p = policy(BW_JITTER_ADDITIVE, 1000, 0, 1200, 400, 1);
  int64_t *d = malloc(sizeof(int64_t) * N);
  summary_t s;
  long at_cap = 0;
  int i;
  (void)state;
  assert_non_null(d);
  s = first_delays(p, 105, d);
  assert_true(s.lo >= 1000 && s.hi == 1200);
  for (i = 0; i < N; i++)
    if (d[i] == 1200) at_cap++;
  /* P(d + U[0,400] >= 1200) = 201/401 */
  assert_dbl_eq((double)at_cap / N, 201.0 / 401.0, 0.01);
  free(d);
  bw_retry_policy_free(p);
}

/* f(t) = 2^t tanh(sqrt(4t)), the decorrelated curve. */
static double f(double t) {
  return exp2(t) * tanh(sqrt(4.0 * t));
}

/* Decorrelated: the first delay is f(U) / 1.4 * base, so its CDF at
 * f(q) / 1.4 * base is exactly q; its median is 0.897 x base_ms (Polly's
 * "median first delay", slightly below it), its mean the integral of f over
 * [0, 1] / 1.4 * base. */
static void decorrelated_first_delay_has_the_documented_distribution(
    void **state) {
  const int64_t base = 1000;
  bw_retry_policy_t *p = policy(BW_JITTER_DECORRELATED, base, 0, 1000000, 0, 1);
  int64_t *d = malloc(sizeof(int64_t) * N);
  summary_t s;
  double integral = 0;
  int i, q;
  (void)state;
  assert_non_null(d);
  s = first_delays(p, 106, d);
  /* Range: (0, f(1) / 1.4 * base] = (0, 1377]. */
  assert_true(s.lo >= 0 && s.hi <= 1378);
  for (q = 1; q <= 9; q++) {
    double x = f(q / 10.0) / 1.4 * (double)base;
    long below = 0;
    for (i = 0; i < N; i++)
      if ((double)d[i] <= x) below++;
    /* SE of a proportion: 0.0016 at most; rounding to ms adds < 0.001. */
    if (fabs((double)below / N - q / 10.0) > 0.008) {
      print_error("CDF at %.1f ms: %.4f, expected %.1f\n", x, (double)below / N,
                  q / 10.0);
      fail();
    }
  }
  /* The median: 897.4 ms. */
  {
    long below = 0;
    for (i = 0; i < N; i++)
      if (d[i] <= 897) below++;
    assert_dbl_eq((double)below / N, 0.5, 0.008);
    assert_dbl_eq(f(0.5) / 1.4, 0.8974, 0.0001);
  }
  /* The mean: Simpson's rule over [0, 1]. */
  for (i = 0; i <= 1000; i++) {
    double w = (i == 0 || i == 1000) ? 1 : (i % 2 ? 4 : 2);
    integral += w * f(i / 1000.0);
  }
  integral /= 3000.0;
  assert_dbl_eq(s.mean, integral / 1.4 * (double)base, 3.0); /* SE ~1 */
  free(d);
  bw_retry_policy_free(p);
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Later decorrelated delays: medians near 1.14, 2.02, 4.01, 8.0 x base, i.e.
 * doubling from the third retry on, like the exponential curve they replace;
 * every delay stays within [0, max_ms] (the Polly lab: 1.5 s). */
static void decorrelated_later_delays_double_and_respect_the_cap(void **state) {
  enum { K = 5 };
  const int64_t base = 1000;
  bw_retry_policy_t *p = policy(BW_JITTER_DECORRELATED, base, 0, 1000000, 0, 1);
  bw_retry_policy_t *capped =
      policy(BW_JITTER_DECORRELATED, 200, 0, 1500, 0, 1);
  int64_t *d[K];
  double med[K];
  bw_rand_t g;
  int i, k;
  (void)state;
  for (k = 0; k < K; k++) {
    d[k] = malloc(sizeof(int64_t) * N);
    assert_non_null(d[k]);
  }
  bw_rand_seed(&g, 107);
  for (i = 0; i < N; i++) {
    double prev = 0, prev_capped = 0;
    bw_rand_t h = g;
    for (k = 0; k < K; k++) {
      int64_t x = bw_retry_delay_ms(capped, (uint32_t)k + 1, &h, &prev_capped);
      assert_true(x >= 0 && x <= 1500);
      d[k][i] = bw_retry_delay_ms(p, (uint32_t)k + 1, &g, &prev);
      assert_true(d[k][i] >= 0);
    }
  }
  for (k = 0; k < K; k++) {
    qsort(d[k], N, sizeof(int64_t), cmp_i64);
    med[k] = (double)d[k][N / 2] / (double)base;
  }
  assert_dbl_eq(med[0], 0.897, 0.01);
  assert_dbl_eq(med[1], 1.14, 0.02);
  assert_dbl_eq(med[2], 2.02, 0.03);
  assert_dbl_eq(med[3], 4.01, 0.05);
  assert_dbl_eq(med[4], 8.00, 0.10);
  assert_dbl_eq(med[3] / med[2], 2.0, 0.05);
  assert_dbl_eq(med[4] / med[3], 2.0, 0.05);
  for (k = 0; k < K; k++)
    free(d[k]);
  bw_retry_policy_free(p);
  bw_retry_policy_free(capped);
}

/* Through the iterator: 10^5 logical calls of one seeded policy, each
 * drawing its first delay from its own stream. If the per-iterator streams
 * were correlated (or shared), the mean or the spread would show it. */
static void iterators_of_one_policy_draw_independent_first_delays(
    void **state) {
  bw_retry_policy_t *p = policy(BW_JITTER_FULL, 1000, 0, 30000, 0, 777);
  double sum = 0, sum2 = 0, mean, var;
  int64_t prev = -1;
  long repeats = 0;
  int i;
  (void)state;
  for (i = 0; i < N; i++) {
    bw_retry_t r;
    int64_t d;
    bw_retry_begin(&r, p, T0);
    assert_int_equal(
        bw_retry_next(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, T0, &d),
        BW_RETRY);
    sum += (double)d;
    sum2 += (double)d * (double)d;
    if (d == prev) repeats++;
    prev = d;
  }
  mean = sum / N;
  var = sum2 / N - mean * mean;
  assert_dbl_eq(mean, 500.0, 5.0);
  assert_dbl_eq(sqrt(var), 289.0, 3.0); /* uniform on 1001 values */
  assert_true(repeats < 250);           /* ~100 expected (1 in 1001) */
  bw_retry_policy_free(p);
}

/* Two clients with different seeds (and two iterators of one policy) must
 * not retry in lock-step: their delay sequences differ in almost every
 * position. */
static void different_seeds_do_not_retry_in_lock_step(void **state) {
  enum { CALLS = 20000, RETRIES = 3 };
  bw_retry_policy_t *a = policy(BW_JITTER_FULL, 1000, 0, 30000, 0, 1);
  bw_retry_policy_t *b = policy(BW_JITTER_FULL, 1000, 0, 30000, 0, 2);
  bw_retry_policy_t *dj = policy(BW_JITTER_DECORRELATED, 200, 0, 1500, 0, 3);
  long same_ab = 0, same_aa = 0, same_dj = 0;
  int i, k;
  (void)state;
  for (i = 0; i < CALLS; i++) {
    bw_retry_t ra, rb, ra2, d1, d2;
    bw_retry_begin(&ra, a, T0);
    bw_retry_begin(&rb, b, T0);
    bw_retry_begin(&ra2, a, T0);
    bw_retry_begin(&d1, dj, T0);
    bw_retry_begin(&d2, dj, T0);
    for (k = 0; k < RETRIES; k++) {
      int64_t x, y, z, u, v;
      int64_t now = T0 + k * 3000 * MS;
      assert_int_equal(bw_retry_next(&ra, BW_VERDICT_TRANSIENT, -1, now, &x),
                       BW_RETRY);
      assert_int_equal(bw_retry_next(&rb, BW_VERDICT_TRANSIENT, -1, now, &y),
                       BW_RETRY);
      assert_int_equal(bw_retry_next(&ra2, BW_VERDICT_TRANSIENT, -1, now, &z),
                       BW_RETRY);
      assert_int_equal(bw_retry_next(&d1, BW_VERDICT_TRANSIENT, -1, now, &u),
                       BW_RETRY);
      assert_int_equal(bw_retry_next(&d2, BW_VERDICT_TRANSIENT, -1, now, &v),
                       BW_RETRY);
      if (x == y) same_ab++;
      if (x == z) same_aa++;
      if (u == v) same_dj++;
    }
  }
  /* Full jitter on [0, 1000 * 2^k]: a coincidence is < 1 in 1001. The
   * decorrelated delays, rounded to ms, coincide more often (the first
   * delay's density peaks near 0 ms) but still rarely. */
  assert_true(same_ab < CALLS * RETRIES / 100);
  assert_true(same_aa < CALLS * RETRIES / 100);
  assert_true(same_dj < CALLS * RETRIES / 50);
  bw_retry_policy_free(a);
  bw_retry_policy_free(b);
  bw_retry_policy_free(dj);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(no_jitter_is_the_curve_itself),
      cmocka_unit_test(full_jitter_is_uniform_on_zero_to_d),
      cmocka_unit_test(full_jitter_with_a_floor_is_uniform_above_it),
      cmocka_unit_test(equal_jitter_averages_three_quarters),
      cmocka_unit_test(additive_jitter_averages_d_plus_half_the_range),
      cmocka_unit_test(additive_jitter_never_passes_the_cap),
      cmocka_unit_test(
          decorrelated_first_delay_has_the_documented_distribution),
      cmocka_unit_test(decorrelated_later_delays_double_and_respect_the_cap),
      cmocka_unit_test(iterators_of_one_policy_draw_independent_first_delays),
      cmocka_unit_test(different_seeds_do_not_retry_in_lock_step),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
