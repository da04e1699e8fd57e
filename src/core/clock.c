/* Clocks: monotonic (precise and coarse), realtime, and manual for tests.
 *
 * The built-in clocks read through bw__gettime: libc's clock_gettime, or,
 * where the vDSO exports it, the vDSO's own __vdso_clock_gettime, found once
 * when the library loads. libc's wrapper costs about as much as the coarse
 * read itself (3.1 ns against 2.35 ns here, BENCHMARKS.md), and the core's
 * hot paths read the coarse clock twice per call; bw__clock_now
 * (internal.h) also skips the function pointer for the built-in clocks. */
#include <string.h>
#include <time.h>

#include "internal.h"

/* x86-64 only: there the vDSO's clock_gettime takes the same struct
 * timespec as libc's (a 32-bit target with a 64-bit time_t would hand the
 * vDSO's 32-bit call a 64-bit struct), and that is where it was measured. */
#if defined(__linux__) && defined(__GLIBC__) && defined(__x86_64__) && \
    !defined(__ILP32__)
#include <elf.h>
#include <sys/auxv.h>
#define BW__HAVE_VDSO 1
#endif

bw__gettime_fn bw__gettime = clock_gettime;

#ifdef BW__HAVE_VDSO
/* The address of the function `name` among the vDSO's dynamic symbols, or
 * 0. The vDSO is a small ELF shared object the kernel maps into every
 * process; the auxiliary vector gives its address (AT_SYSINFO_EHDR), so
 * this works in a static binary too, where dlopen would not. Its first
 * PT_LOAD segment gives the load bias, PT_DYNAMIC the symbol and string
 * tables, and DT_HASH's chain count the number of symbols, which are
 * scanned in order (a dozen or so). Without any of them: 0. */
static uintptr_t bw__vdso_sym(const char *name) {
  const unsigned char *base =
      (const unsigned char *)(uintptr_t)getauxval(AT_SYSINFO_EHDR);
  const Elf64_Ehdr *eh;
  const Elf64_Phdr *ph;
  const Elf64_Dyn *dyn = NULL;
  const Elf64_Sym *syms = NULL;
  const Elf64_Word *hash = NULL;
  const char *strs = NULL;
  uintptr_t bias = 0;
  int loaded = 0;
  if (base == NULL) return 0;
  eh = (const Elf64_Ehdr *)(const void *)base;
  if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
      eh->e_ident[EI_CLASS] != ELFCLASS64 ||
      eh->e_phentsize != sizeof(Elf64_Phdr))
    return 0;
  ph = (const Elf64_Phdr *)(const void *)(base + eh->e_phoff);
  for (unsigned i = 0; i < eh->e_phnum; i++) {
    if (ph[i].p_type == PT_LOAD && !loaded) {
      bias = (uintptr_t)base + ph[i].p_offset - ph[i].p_vaddr;
      loaded = 1;
    } else if (ph[i].p_type == PT_DYNAMIC) {
      dyn = (const Elf64_Dyn *)(const void *)(base + ph[i].p_offset);
    }
  }
  if (!loaded || dyn == NULL) return 0;
  for (; dyn->d_tag != DT_NULL; dyn++) {
    uintptr_t at = bias + dyn->d_un.d_ptr;
    if (dyn->d_tag == DT_SYMTAB)
      syms = (const Elf64_Sym *)at;
    else if (dyn->d_tag == DT_STRTAB)
      strs = (const char *)at;
    else if (dyn->d_tag == DT_HASH)
      hash = (const Elf64_Word *)at;
  }
  if (syms == NULL || strs == NULL || hash == NULL) return 0;
  /* DT_HASH: nbucket, nchain, ...; nchain is the symbol count. */
  for (Elf64_Word k = 0; k < hash[1]; k++) {
    const Elf64_Sym *sym = &syms[k];
    unsigned bind = ELF64_ST_BIND(sym->st_info);
    if (ELF64_ST_TYPE(sym->st_info) != STT_FUNC || sym->st_shndx == SHN_UNDEF ||
        (bind != STB_GLOBAL && bind != STB_WEAK))
      continue;
    if (strcmp(strs + sym->st_name, name) == 0) return bias + sym->st_value;
  }
  return 0;
}

/* Before main (or while the shared library loads), so no thread reads the
 * pointer while it is written. Where the vDSO or its symbol is missing
 * (another libc, a kernel without it), libc's clock_gettime stays. */
__attribute__((constructor)) static void bw__clock_find_vdso(void) {
  uintptr_t f = bw__vdso_sym("__vdso_clock_gettime");
  if (f != 0) {
    struct timespec a = {0, 0}, v = {0, 0}, z = {0, 0};
    /* An address to a function pointer: implementation-defined in ISO C,
     * and what every ELF platform does. */
    bw__gettime_fn fn = (bw__gettime_fn)f;
    /* Used only if it reads what libc reads (within a second, in order). */
    if (clock_gettime(CLOCK_MONOTONIC, &a) == 0 &&
        fn(CLOCK_MONOTONIC, &v) == 0 &&
        clock_gettime(CLOCK_MONOTONIC, &z) == 0) {
      int64_t ta = (int64_t)a.tv_sec * BW_NS_PER_S + a.tv_nsec;
      int64_t tv = (int64_t)v.tv_sec * BW_NS_PER_S + v.tv_nsec;
      int64_t tz = (int64_t)z.tv_sec * BW_NS_PER_S + z.tv_nsec;
      if (tv >= ta && tv <= tz && tz - ta < BW_NS_PER_S) bw__gettime = fn;
    }
  }
}
#endif

static int64_t bw__mono_now(const bw_clock_t *c) {
  (void)c;
  return bw__read_clock(CLOCK_MONOTONIC);
}

static int64_t bw__coarse_now(const bw_clock_t *c) {
  (void)c;
  return bw__read_clock(BW__COARSE_ID);
}

static int64_t bw__real_now(const bw_clock_t *c) {
  (void)c;
  return bw__read_clock(CLOCK_REALTIME);
}

const bw_clock_t bw__clock_mono = {bw__mono_now, NULL};
const bw_clock_t bw__clock_coarse = {bw__coarse_now, NULL};
static const bw_clock_t bw__real = {bw__real_now, NULL};

const bw_clock_t *bw_clock_monotonic(void) {
  return &bw__clock_mono;
}
const bw_clock_t *bw_clock_monotonic_coarse(void) {
  return &bw__clock_coarse;
}
const bw_clock_t *bw_clock_realtime(void) {
  return &bw__real;
}

/* A manual clock is a bw_clock_t followed by its atomic reading. */
typedef struct bw__manual_s {
  bw_clock_t base;
  _Atomic int64_t now;
} bw__manual_t;

static int64_t bw__manual_now(const bw_clock_t *c) {
  const bw__manual_t *m = (const bw__manual_t *)c;
  return atomic_load_explicit(&((bw__manual_t *)m)->now, memory_order_acquire);
}

bw_clock_t *bw_clock_manual_new(int64_t start_ns) {
  bw__manual_t *m = bw_malloc(sizeof(*m));
  if (m == NULL) return NULL;
  m->base.now_ns = bw__manual_now;
  m->base.data = NULL;
  atomic_init(&m->now, start_ns);
  return &m->base;
}

void bw_clock_manual_set(bw_clock_t *c, int64_t now_ns) {
  bw__manual_t *m = (bw__manual_t *)c;
  int64_t cur;
  if (c == NULL || c->now_ns != bw__manual_now) return;
  cur = atomic_load_explicit(&m->now, memory_order_relaxed);
  while (now_ns > cur && !atomic_compare_exchange_weak_explicit(
                             &m->now, &cur, now_ns, memory_order_acq_rel,
                             memory_order_relaxed)) {
  }
}

void bw_clock_manual_advance(bw_clock_t *c, int64_t delta_ns) {
  bw__manual_t *m = (bw__manual_t *)c;
  if (c == NULL || c->now_ns != bw__manual_now || delta_ns <= 0) return;
  atomic_fetch_add_explicit(&m->now, delta_ns, memory_order_acq_rel);
}

void bw_clock_free(bw_clock_t *c) {
  if (c == NULL || c->now_ns != bw__manual_now) return;
  bw_free(c);
}
