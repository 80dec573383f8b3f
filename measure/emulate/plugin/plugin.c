/*
 * rprof's QEMU TCG plugin: counts the floating-point work of an x86-64
 * program exactly and feeds its memory accesses to a cache model, per
 * vCPU (one per guest thread in qemu-user), attributed to translation
 * blocks so that rprof can name the functions.
 *
 * Arguments (-plugin rprof.so,ARG=VALUE,...):
 *   out=DIR        write DIR/PID.GEN.txt at exit (required)
 *   line=BYTES     cache line size (default 64)
 *   cache=SIZE:WAYS[:SIZE:WAYS...]  the levels from L1 down; none: no
 *                  model (FLOPs only)
 *   qemu=PATH      this qemu binary, to follow execve (optional)
 *   exe=PATH       the file QEMU loads (the program, or a script's
 *                  interpreter), for QEMUs whose API cannot say it (10.0's
 *                  linux-user lacks qemu_plugin_path_to_binary; optional)
 *   cpu=OPTION     the -cpu option of this run, given again to followed
 *                  execs (its commas doubled, as QEMU's option syntax
 *                  escapes them; optional)
 *   self=PATH      this plugin's file, to follow execve (optional)
 *   gen=N          the generation of a followed exec (internal)
 *   disas=1        also list every translated FP instruction with QEMU's
 *                  disassembly (tests cross-check the decoder with it)
 *   call=PATH      count every call of one function of the shared library
 *                  PATH separately (rprof dnn: dnnl_primitive_execute),
 *   call_at=HEX    at this offset from the library's load base (its ELF
 *                  address; the first PT_LOAD is at 0),
 *   call_size=N    N bytes long: a ret in it ends the call
 *
 * The output file format is documented in docs/emulate.md; rprof's Go side
 * (measure/emulate) reads it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include RP_API_HEADER
#include "fpclass.h"

RP_EXPORT int qemu_plugin_version = RP_QEMU_PLUGIN_API;

#define MAX_VCPUS 1024
#define MAX_LEVELS 4
#define CHUNK_BITS 12
#define CHUNK (1u << CHUNK_BITS)
#define MAX_CHUNKS 65536 /* 2^28 translation blocks */
#define NO_LINE UINT64_MAX
#define HINT_BITS 12 /* the L1 way hints: 4096 per vCPU */
#define MINFO_BITS 6 /* the meminfo values each vCPU remembers: 64 */
#define MINFO_KNOWN (1ull << 63)
#define MINFO_STORE_BIT 7 /* above any access's size in bytes */
#define MINFO_STORE (1u << MINFO_STORE_BIT)

/* per translation block, fixed at translation */
struct tbinfo {
	uint64_t vaddr;
	uint32_t ninsns;
	uint32_t flops[RP_NPREC];
	uint32_t wflops[RP_NWIDTH];
};

/* per translation block and vCPU, counted at execution */
struct tbcount {
	uint64_t execs;
	uint64_t dram; /* bytes between the last level and DRAM */
	uint64_t bytes[2]; /* loaded and stored by its instructions */
};

struct level {
	uint32_t sets, ways;
	uint64_t mask; /* sets-1 when sets is a power of two, else 0 */
	uint64_t *tags; /* line+1; 0 empty */
	uint64_t *used; /* when each way was last used (clock); 0 empty */
	uint8_t *mru;   /* each set's way of its last hit found by search, tried first */
	uint8_t *dirty;
	uint32_t *owner; /* the block that last wrote a dirty line */
	/* where each way's line was in the level below when it was filled:
	 * a hint, checked by tag, so that its write-back needs no search */
	uint32_t *below;
	uint64_t clock; /* counts this level's uses: LRU order without moves */
	uint64_t fills, writebacks; /* lines from and to the level below */
};

/* totals is what a vCPU counted so far: its flops and bytes only where
 * call= reads them (the output's come from the blocks'), its DRAM lines
 * and non-temporal bytes always; only its own thread writes it, and
 * others read it (bump and snapshot) to time a call. */
struct totals {
	uint64_t flops[RP_NPREC];
	uint64_t bytes[2]; /* loaded, stored */
	uint64_t nt_bytes;
	uint64_t dram_rd, dram_wr; /* lines */
};

struct vcpu {
	uint64_t last_line; /* the line the previous access touched */
	int last_dirty;     /* ...and whether it is dirty in L1 */
	uint64_t last_nt;   /* the line of the previous non-temporal store */
	/* hint[h] is the L1 slot (set * ways + way) where a line hashing to h
	 * was last seen: a hit there needs no search of its set. */
	uint32_t hint[1u << HINT_BITS];
	/* the meminfo values seen (MINFO_KNOWN | value) and what they say */
	uint64_t minfo[1u << MINFO_BITS];
	uint8_t mdecoded[1u << MINFO_BITS];
	/* the block of the last access, and its counts */
	uint32_t cur_tb;
	struct tbcount *cur;
	struct totals n;
	struct level lv[MAX_LEVELS];
	/* the counted function (call=): nesting depth on this vCPU, and at
	 * the outermost entry the sum of all vCPUs' totals and the overlap
	 * epoch */
	int call_depth, call_overlap;
	uint64_t call_epoch;
	struct totals call_start;
	/* the mmap this vCPU is in (the counted library's load base) */
	int64_t mmap_fd;
	uint64_t mmap_off;
	struct tbcount *chunks[MAX_CHUNKS];
};

/* call is one counted call: the counts of all vCPUs from its entry to its
 * return, and whether another vCPU's call overlapped it. */
struct call {
	uint32_t vcpu;
	int overlap;
	struct totals n;
};

static struct {
	char *out;
	char *qemu, *self, *args, *cpu;
	char *exe; /* the image QEMU loaded, when QEMU cannot say (exe=) */
	int gen;
	int disas;
	uint32_t line;
	unsigned line_shift;
	int nlevels;
	uint64_t size[MAX_LEVELS];
	uint32_t ways[MAX_LEVELS];
	pid_t pid;
	int host_addrs; /* guest addresses are host addresses */
	/* the main thread's stack, modelled at addresses relative to the
	 * image's first access (see stack_find); stack_found is set once
	 * it was looked for, and until then stack_lo and stack_len span
	 * every address, so that the callbacks test one range */
	uint64_t stack_lo, stack_len, stack_anchor;
	int stack_found;
	int vcpu_overflow;
	int execs_followed, execs_unfollowed;
	char exec_into[4096];

	pthread_mutex_t lock; /* translation and vCPU creation */
	uint32_t ntb;
	struct tbinfo **tbs;  /* MAX_CHUNKS chunks of CHUNK blocks */
#ifdef RP_HAVE_SCOREBOARD
	/* blocks' executions counted inline, without a callback: per chunk
	 * of blocks, a scoreboard whose element is the chunk's counts on one
	 * vCPU (when no call= needs each vCPU's totals as it runs) */
	struct qemu_plugin_scoreboard **execs;
#endif
	FILE *disas_out;

	/* call=: the function's offset from the load base, size, and the
	 * library's device and inode; entry is its guest address once the
	 * library is mapped (0 before). */
	const char *call_path;
	uint64_t call_at, call_size, entry;
	dev_t call_dev;
	ino_t call_ino;
	int calls_active;     /* outermost calls in progress, all vCPUs */
	uint64_t call_epochs; /* bumped whenever a call starts during another */
	pthread_mutex_t call_lock;
	struct call *calls; /* in the order they returned */
	size_t ncalls, calls_cap;
} g = {.line = 64, .stack_len = UINT64_MAX, .lock = PTHREAD_MUTEX_INITIALIZER, .call_lock = PTHREAD_MUTEX_INITIALIZER};

/* vcpus holds each vCPU's counts, made at its first use. */
static struct vcpu *vcpus[MAX_VCPUS];

/* bump adds n to one of a vCPU's totals; a relaxed atomic store (a plain
 * store on x86-64) lets other vCPUs read it whole while it runs. */
static inline void bump(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, *c + n, __ATOMIC_RELAXED);
}

static struct vcpu *vcpu_new(void)
{
	struct vcpu *v = calloc(1, sizeof(*v));
	if (!v)
		abort();
	v->last_line = v->last_nt = NO_LINE;
	v->mmap_fd = -1;
	for (int i = 0; i < g.nlevels; i++) {
		struct level *l = &v->lv[i];
		uint64_t lines = g.size[i] / g.line;
		l->ways = g.ways[i];
		l->sets = (uint32_t)(lines / l->ways);
		if (l->sets == 0)
			l->sets = 1;
		l->mask = (l->sets & (l->sets - 1)) == 0 ? l->sets - 1 : 0;
		l->tags = calloc((size_t)l->sets * l->ways, sizeof(uint64_t));
		l->used = calloc((size_t)l->sets * l->ways, sizeof(uint64_t));
		l->mru = calloc(l->sets, 1);
		l->dirty = calloc((size_t)l->sets * l->ways, 1);
		l->owner = calloc((size_t)l->sets * l->ways, sizeof(uint32_t));
		l->below = calloc((size_t)l->sets * l->ways, sizeof(uint32_t));
		if (!l->tags || !l->used || !l->mru || !l->dirty || !l->owner || !l->below ||
		    l->ways > 256)
			abort();
	}
	return v;
}

/* vcpu_make returns vCPU idx's counts, made at its first use. */
static __attribute__((noinline, cold)) struct vcpu *vcpu_make(unsigned int idx)
{
	struct vcpu *v;
	if (idx >= MAX_VCPUS) {
		/* More live threads than slots: share the last one (races), and
		 * say so in the output. */
		__atomic_store_n(&g.vcpu_overflow, 1, __ATOMIC_RELAXED);
		idx = MAX_VCPUS - 1;
	}
	v = __atomic_load_n(&vcpus[idx], __ATOMIC_ACQUIRE);
	if (v)
		return v;
	pthread_mutex_lock(&g.lock);
	v = vcpus[idx];
	if (!v) {
		v = vcpu_new();
		__atomic_store_n(&vcpus[idx], v, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&g.lock);
	return v;
}

static inline struct vcpu *vcpu_get(unsigned int idx)
{
	struct vcpu *v = idx < MAX_VCPUS ? __atomic_load_n(&vcpus[idx], __ATOMIC_ACQUIRE) : NULL;
	return __builtin_expect(v != NULL, 1) ? v : vcpu_make(idx);
}

/* tbcount_new makes the chunk of a vCPU's block counters holding id. */
static __attribute__((noinline, cold)) struct tbcount *tbcount_new(struct vcpu *v, uint32_t id)
{
	struct tbcount *c = calloc(CHUNK, sizeof(*c));
	if (!c)
		abort();
	__atomic_store_n(&v->chunks[id >> CHUNK_BITS], c, __ATOMIC_RELEASE);
	return &c[id & (CHUNK - 1)];
}

/* tbcount_get returns this vCPU's counters of block id; only the vCPU's
 * own thread writes them, so no atomics are needed. */
static inline struct tbcount *tbcount_get(struct vcpu *v, uint32_t id)
{
	struct tbcount *c = v->chunks[id >> CHUNK_BITS];
	if (__builtin_expect(!c, 0))
		return tbcount_new(v, id);
	return &c[id & (CHUNK - 1)];
}

/* tbcount_cur is tbcount_get for the block of an access: a block's
 * accesses come in a row. */
static inline struct tbcount *tbcount_cur(struct vcpu *v, uint32_t id)
{
	if (__builtin_expect(id != v->cur_tb, 0)) {
		v->cur = tbcount_get(v, id);
		v->cur_tb = id;
	}
	return v->cur;
}

static inline struct tbinfo *tbinfo_get(uint32_t id)
{
	return &g.tbs[id >> CHUNK_BITS][id & (CHUNK - 1)];
}

#ifdef RP_HAVE_SCOREBOARD
static inline qemu_plugin_u64 execs_entry(uint32_t id)
{
	return (qemu_plugin_u64){g.execs[id >> CHUNK_BITS], (id & (CHUNK - 1)) * sizeof(uint64_t)};
}
#endif

/* count_inline has QEMU count block id's executions by itself, per vCPU,
 * when the API can (scoreboards, version 2 on) and no call= needs each
 * vCPU's totals while it runs; nonzero when it does. Version 1's inline
 * add is one counter for all vCPUs, added without atomics: threads would
 * lose counts, so version 1 counts by callback. Runs under g.lock. */
static int count_inline(struct qemu_plugin_tb *tb, uint32_t id)
{
#ifdef RP_HAVE_SCOREBOARD
	if (g.call_path)
		return 0;
	if (!g.execs[id >> CHUNK_BITS])
		g.execs[id >> CHUNK_BITS] = qemu_plugin_scoreboard_new(CHUNK * sizeof(uint64_t));
	qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(tb, QEMU_PLUGIN_INLINE_ADD_U64,
	                                                  execs_entry(id), 1);
	return 1;
#else
	(void)tb;
	(void)id;
	return 0;
#endif
}

/* inline_execs is how often all vCPUs ran block id as counted inline. */
static uint64_t inline_execs(uint32_t id)
{
#ifdef RP_HAVE_SCOREBOARD
	if (g.execs && g.execs[id >> CHUNK_BITS])
		return qemu_plugin_u64_sum(execs_entry(id));
#endif
	(void)id;
	return 0;
}

/* inline_vcpus is how many vCPUs QEMU started, where blocks are counted
 * inline (a vCPU that only ran them never reached a callback), else 0. */
static int inline_vcpus(void)
{
#ifdef RP_HAVE_SCOREBOARD
	if (!g.call_path)
		return qemu_plugin_num_vcpus();
#endif
	return 0;
}

/* inline_reset zeroes the inline counts (a forked child's start). */
static void inline_reset(void)
{
#ifdef RP_HAVE_SCOREBOARD
	int n = qemu_plugin_num_vcpus();
	for (int c = 0; g.execs && c < MAX_CHUNKS; c++)
		for (int i = 0; g.execs[c] && i < n; i++)
			memset(qemu_plugin_scoreboard_find(g.execs[c], (unsigned)i), 0,
			       CHUNK * sizeof(uint64_t));
#endif
}

/* ---- cache model: set-associative LRU, write-back, write-allocate ---- */

static void to_level(struct vcpu *v, int lvl, uint64_t line, uint32_t owner, uint32_t hint);

/* find looks for line in its set of level l: it returns the index of the
 * way holding it, or of the way to fill (an empty one, else the least
 * recently used: the first of the set's ways with the smallest use time)
 * with *hit 0. One pass over the set, no moves: recency is each way's
 * last use on the level's clock. */
static inline size_t find(struct level *l, uint64_t line, int *hit)
{
	uint64_t set = l->mask ? (line & l->mask) : (line % l->sets);
	size_t base = (size_t)set * l->ways;
	const uint64_t *t = l->tags + base, *u = l->used + base;
	uint64_t oldest = UINT64_MAX, want = line + 1;
	uint32_t victim = 0;
	/* Hits are the common case, most often on the set's most recent
	 * way: they read only the tags. */
	if (t[l->mru[set]] == want) {
		*hit = 1;
		return base + l->mru[set];
	}
#pragma GCC unroll 4
	for (uint32_t w = 0; w < l->ways; w++) {
		if (t[w] == want) {
			*hit = 1;
			l->mru[set] = (uint8_t)w;
			return base + w;
		}
		if (u[w] < oldest) {
			oldest = u[w];
			victim = w;
		}
	}
	*hit = 0;
	return base + victim;
}

static void dram(struct vcpu *v, int write, uint32_t tb)
{
	bump(write ? &v->n.dram_wr : &v->n.dram_rd, 1);
	tbcount_get(v, tb)->dram += g.line;
}

/* fill puts line in way i of level lvl as its most recent, writing the
 * dirty line it replaces down first. */
static inline void fill(struct vcpu *v, int lvl, size_t i, uint64_t line, int dirty,
                        uint32_t owner)
{
	struct level *l = &v->lv[lvl];
	if (l->tags[i] && l->dirty[i]) {
		l->writebacks++;
		to_level(v, lvl + 1, l->tags[i] - 1, l->owner[i], l->below[i]);
	}
	l->tags[i] = line + 1;
	l->used[i] = ++l->clock;
	l->dirty[i] = (uint8_t)dirty;
	l->owner[i] = owner;
}

/* use marks way i of level l as just used by a demand access (its hit). */
static inline void use(struct level *l, size_t i, int store, uint32_t tb)
{
	l->used[i] = ++l->clock;
	if (store) {
		l->dirty[i] = 1;
		l->owner[i] = tb;
	}
}

/* access_line brings line into L1 (a demand access: a load or a store)
 * and updates its recency; it returns the line's slot in L1. A miss looks
 * in each level below until one holds the line (or reads it from DRAM),
 * then fills the levels that missed from the bottom up. DRAM reads count
 * for the accessing block tb; a store makes tb the line's owner, whose
 * DRAM writes its write-back will count for. */
static size_t access_line(struct vcpu *v, uint64_t line, int store, uint32_t tb)
{
	size_t slot[MAX_LEVELS];
	int lvl, hit = 0;
	for (lvl = 0; lvl < g.nlevels; lvl++) {
		slot[lvl] = find(&v->lv[lvl], line, &hit);
		if (hit) {
			use(&v->lv[lvl], slot[lvl], lvl == 0 && store, tb);
			break;
		}
		v->lv[lvl].fills++;
	}
	if (lvl == g.nlevels)
		dram(v, 0, tb);
	/* The levels below never write into a level above, so the slots
	 * found stay the ones to fill. */
	uint32_t below = lvl < g.nlevels ? (uint32_t)slot[lvl] : 0;
	for (int k = lvl - 1; k >= 0; k--) {
		int st = k == 0 && store;
		fill(v, k, slot[k], line, st, st ? tb : 0);
		v->lv[k].below[slot[k]] = below;
		below = (uint32_t)slot[k];
	}
	return slot[0];
}

/* to_level writes a dirty line evicted from the level above into level
 * lvl: it marks a present line dirty (keeping its recency) or allocates it
 * without a fill, since the whole line is written. hint is the slot where
 * the line was when the level above was filled from this one. */
static void to_level(struct vcpu *v, int lvl, uint64_t line, uint32_t owner, uint32_t hint)
{
	if (lvl == g.nlevels) {
		dram(v, 1, owner);
		return;
	}
	struct level *l = &v->lv[lvl];
	int hit = l->tags[hint] == line + 1;
	size_t i = hit ? hint : find(l, line, &hit);
	if (hit) {
		l->dirty[i] = 1;
		l->owner[i] = owner;
		return;
	}
	fill(v, lvl, i, line, 1, owner);
}

/* invalidate drops line from every level (a non-temporal store takes it
 * out of the caches; its bytes go to DRAM). */
static void invalidate(struct vcpu *v, uint64_t line)
{
	for (int lvl = 0; lvl < g.nlevels; lvl++) {
		struct level *l = &v->lv[lvl];
		int hit;
		size_t i = find(l, line, &hit);
		if (hit) {
			l->tags[i] = l->used[i] = 0;
			l->dirty[i] = 0;
			l->owner[i] = 0;
		}
	}
}

/* flush writes every dirty line down, level by level, as the program's
 * data would eventually be: Q counts what the program wrote. */
static void flush(struct vcpu *v)
{
	for (int lvl = 0; lvl < g.nlevels; lvl++) {
		struct level *l = &v->lv[lvl];
		size_t n = (size_t)l->sets * l->ways;
		for (size_t i = 0; i < n; i++)
			if (l->tags[i] && l->dirty[i]) {
				l->dirty[i] = 0;
				l->writebacks++;
				to_level(v, lvl + 1, l->tags[i] - 1, l->owner[i], l->below[i]);
			}
	}
	v->last_line = NO_LINE;
}

/* ---- callbacks ---- */

/* tb_totals adds block id's work to the vCPU's running totals, which
 * only calls' counts (call=) read; the output's come from the blocks'. */
static __attribute__((noinline)) void tb_totals(struct vcpu *v, uint32_t id)
{
	const struct tbinfo *ti = tbinfo_get(id);
	for (int p = 0; p < RP_NPREC; p++)
		if (ti->flops[p])
			bump(&v->n.flops[p], ti->flops[p]);
}

static void on_tb_exec(unsigned int vcpu_index, void *udata)
{
	struct vcpu *v = vcpu_get(vcpu_index);
	uint32_t id = (uint32_t)(uintptr_t)udata;
	tbcount_get(v, id)->execs++;
	if (g.call_path)
		tb_totals(v, id);
}

/* STACK_BASE is where the model places the main stack's first access: a
 * non-canonical address, so no real mapping's lines alias its lines. */
#define STACK_BASE (1ull << 62)

/* stack_find runs at the image's first memory access, which x86-64 entry
 * code makes to the stack (_start reads argc, or ld.so's pushes a return
 * address), at a fixed offset below the initial stack pointer for a given
 * program. The environment's size moves that pointer; modelling the
 * anonymous mapping holding it relative to that access makes the model
 * see the same stack lines whatever the environment (docs/emulate.md). */
static void stack_find(uint64_t vaddr)
{
	FILE *m;
	char line[4352];
	pthread_mutex_lock(&g.lock);
	if (g.stack_found) {
		pthread_mutex_unlock(&g.lock);
		return;
	}
	g.stack_len = 0;
	if (!g.host_addrs || !(m = fopen("/proc/self/maps", "r"))) {
		__atomic_store_n(&g.stack_found, 1, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&g.lock);
		return;
	}
	while (fgets(line, sizeof(line), m)) {
		unsigned long long lo, hi;
		char perms[8], path[4096] = "";
		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %4095[^\n]", &lo, &hi, perms, path) < 3)
			continue;
		if (vaddr >= lo && vaddr < hi) {
			if (perms[0] == 'r' && perms[1] == 'w' && (!path[0] || strcmp(path, "[stack]") == 0)) {
				g.stack_lo = lo;
				g.stack_anchor = vaddr;
				__atomic_store_n(&g.stack_len, hi - lo, __ATOMIC_RELEASE);
			}
			break;
		}
	}
	fclose(m);
	__atomic_store_n(&g.stack_found, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&g.lock);
}

/* stack_place is where the model places vaddr, in the main stack's
 * mapping. */
static inline uint64_t stack_place(uint64_t vaddr)
{
	return vaddr - g.stack_anchor + STACK_BASE;
}

/* stack_addr is where the model places vaddr, an address in the main
 * stack's mapping or one of the image's first accesses (the mapping is
 * unknown until then: stack_lo and stack_len span everything). */
static inline uint64_t stack_addr(uint64_t vaddr)
{
	if (__builtin_expect(!__atomic_load_n(&g.stack_found, __ATOMIC_ACQUIRE), 0)) {
		stack_find(vaddr);
		if (vaddr - g.stack_lo >= g.stack_len)
			return vaddr;
	}
	return stack_place(vaddr);
}

/* hint_of is line's L1 way hint (a multiplicative hash: lines a power
 * of two apart, as arrays often are, get different hints). */
static inline uint32_t *hint_of(struct vcpu *v, uint64_t line)
{
	return &v->hint[(line * 0x9e3779b97f4a7c15ull) >> (64 - HINT_BITS)];
}

/* mem_line models an access to line that is not a repeat of the last
 * one, as a demand access to L1. */
static inline void mem_line(struct vcpu *v, uint64_t line, int store, uint32_t tb)
{
	int was = line == v->last_line && v->last_dirty;
	/* An L1 hit where the line was last seen is the whole access: the
	 * same as access_line's hit, without the search. */
	uint32_t *h = hint_of(v, line);
	if (v->lv[0].tags[*h] == line + 1)
		use(&v->lv[0], *h, store, tb);
	else
		*h = (uint32_t)access_line(v, line, store, tb);
	v->last_line = line;
	v->last_dirty = was || store;
}

/* mem_lines models an access of size bytes at vaddr (placed), line by
 * line: one that mem_access takes (under call=, every access but a
 * non-temporal store), or one that on_mem did not settle (it crosses a
 * line, or L1 does not hold its line where the hint says). */
static __attribute__((noinline)) void mem_lines(struct vcpu *v, uint64_t vaddr, uint64_t size,
                                                int store, uint32_t tb)
{
	uint64_t first = vaddr >> g.line_shift, last = (vaddr + size - 1) >> g.line_shift;
	for (uint64_t line = first; line <= last; line++)
		if (line != v->last_line || (store && !v->last_dirty))
			mem_line(v, line, store, tb);
}

/* minfo_slot is where a vCPU remembers what meminfo value info says. */
static inline unsigned minfo_slot(qemu_plugin_meminfo_t info)
{
	return (info * 0x9e3779b1u) >> (32 - MINFO_BITS);
}

/* meminfo_learn asks QEMU what an access's meminfo says and remembers it
 * in slot h. */
static __attribute__((noinline)) unsigned meminfo_learn(struct vcpu *v,
                                                        qemu_plugin_meminfo_t info, unsigned h)
{
	unsigned d = (1u << qemu_plugin_mem_size_shift(info)) |
	             (qemu_plugin_mem_is_store(info) ? MINFO_STORE : 0);
	v->minfo[h] = MINFO_KNOWN | info;
	v->mdecoded[h] = (uint8_t)d;
	return d;
}

/* meminfo_of is an access's size in bytes, with MINFO_STORE for a store.
 * QEMU's answers are functions of the meminfo value alone, and a program
 * uses few values: each vCPU remembers them, so that an access asks QEMU
 * nothing (two calls were a third of the callback's cost). */
static inline unsigned meminfo_of(struct vcpu *v, qemu_plugin_meminfo_t info)
{
	unsigned h = minfo_slot(info);
	if (__builtin_expect(v->minfo[h] == (MINFO_KNOWN | info), 1))
		return v->mdecoded[h];
	return meminfo_learn(v, info, h);
}

/* mem_access is on_mem for any access: it counts the access's bytes and
 * feeds its lines to the model. */
static __attribute__((noinline)) void mem_access(unsigned int vcpu_index,
                                                 qemu_plugin_meminfo_t info, uint64_t vaddr,
                                                 void *udata)
{
	struct vcpu *v = vcpu_get(vcpu_index);
	uint32_t tb = (uint32_t)(uintptr_t)udata;
	unsigned d = meminfo_of(v, info);
	uint64_t size = d & ~MINFO_STORE;
	int store = (d & MINFO_STORE) != 0;

	if (vaddr - g.stack_lo < g.stack_len)
		vaddr = stack_addr(vaddr);
	if (g.call_path)
		bump(&v->n.bytes[store], size);
	tbcount_cur(v, tb)->bytes[store] += size;
	mem_lines(v, vaddr, size, store, tb);
}

/* on_mem is the callback of every access (udata: its block) where no
 * call= needs running totals. It settles what most accesses are without
 * a call: with a meminfo value seen before, within one line, and either a
 * repeat of the last access's line (a ymm load arrives as four 8-byte
 * accesses under QEMU 7.2: after the first, the line is the most recent
 * in L1 already, and dirty for a store) or an L1 hit where the hint says
 * (one update). Other accesses go to mem_lines, counted; those it cannot
 * decode or place without help (a meminfo value, vCPU or block chunk not
 * seen before, the stack not yet found) go to mem_access. */
static void on_mem(unsigned int vcpu_index, qemu_plugin_meminfo_t info, uint64_t vaddr,
                   void *udata)
{
	struct vcpu *v = vcpu_index < MAX_VCPUS
	                     ? __atomic_load_n(&vcpus[vcpu_index], __ATOMIC_ACQUIRE)
	                     : NULL;
	uint32_t tb = (uint32_t)(uintptr_t)udata;
	if (!v)
		goto other;
	unsigned h = minfo_slot(info);
	if (v->minfo[h] != (MINFO_KNOWN | info))
		goto other;
	if (tb != v->cur_tb) {
		struct tbcount *c = v->chunks[tb >> CHUNK_BITS];
		if (!c)
			goto other;
		v->cur = &c[tb & (CHUNK - 1)];
		v->cur_tb = tb;
	}
	if (__builtin_expect(vaddr - g.stack_lo < g.stack_len, 0)) {
		if (!__atomic_load_n(&g.stack_found, __ATOMIC_ACQUIRE))
			goto other;
		vaddr = stack_place(vaddr);
	}
	unsigned d = v->mdecoded[h], store = d >> MINFO_STORE_BIT, shift = g.line_shift;
	uint64_t size = d & ~MINFO_STORE, line = vaddr >> shift;
	if (((vaddr + size - 1) ^ vaddr) >= g.line)
		goto lines; /* it crosses a line */
	if (line != v->last_line || (store && !v->last_dirty)) {
		uint32_t slot = *hint_of(v, line);
		if (v->lv[0].tags[slot] != line + 1)
			goto lines;
		use(&v->lv[0], slot, (int)store, tb);
		/* a load of a repeated line stays on the other branch: here
		 * the line is dirty where this access stores */
		v->last_dirty = (int)store;
		v->last_line = line;
	}
	v->cur->bytes[store] += size;
	return;
lines: /* what mem_access does once the access is decoded and placed */
	v->cur->bytes[store] += size;
	mem_lines(v, vaddr, size, (int)store, tb);
	return;
other:
	mem_access(vcpu_index, info, vaddr, udata);
}

/* on_mem_nt is the callback of an instruction that stores non-temporally
 * (udata: its block): the lines it stores leave the caches and go to
 * DRAM, each once. */
static void on_mem_nt(unsigned int vcpu_index, qemu_plugin_meminfo_t info, uint64_t vaddr,
                      void *udata)
{
	struct vcpu *v = vcpu_get(vcpu_index);
	uint32_t tb = (uint32_t)(uintptr_t)udata;
	unsigned d = meminfo_of(v, info);
	uint64_t size = d & ~MINFO_STORE;

	if (!(d & MINFO_STORE)) {
		mem_access(vcpu_index, info, vaddr, udata);
		return;
	}
	if (vaddr - g.stack_lo < g.stack_len)
		vaddr = stack_addr(vaddr);
	if (g.call_path)
		bump(&v->n.bytes[1], size);
	tbcount_get(v, tb)->bytes[1] += size;
	for (uint64_t line = vaddr >> g.line_shift; line <= (vaddr + size - 1) >> g.line_shift;
	     line++) {
		if (line != v->last_nt) {
			invalidate(v, line);
			bump(&v->n.nt_bytes, g.line);
			tbcount_get(v, tb)->dram += g.line;
			v->last_nt = line;
		}
	}
	v->last_line = NO_LINE;
}

/* ---- per-call counts of one function (call=) ---- */

/* snapshot sums every vCPU's totals as they stand. The vCPUs run in
 * parallel: each figure is read whole, and what other threads count
 * while it is summed falls on one side of the snapshot or the other. */
static void snapshot(struct totals *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (int i = 0; i < MAX_VCPUS; i++) {
		struct vcpu *v = __atomic_load_n(&vcpus[i], __ATOMIC_ACQUIRE);
		if (!v)
			continue;
		const uint64_t *from = (const uint64_t *)&v->n;
		uint64_t *to = (uint64_t *)sum;
		for (size_t k = 0; k < sizeof(*sum) / sizeof(uint64_t); k++)
			to[k] += __atomic_load_n(&from[k], __ATOMIC_RELAXED);
	}
}

/* on_call_entry runs before the function's first instruction. */
static void on_call_entry(unsigned int vcpu_index, void *udata)
{
	struct vcpu *v = vcpu_get(vcpu_index);
	(void)udata;
	if (v->call_depth++ > 0)
		return; /* a nested call is part of the outer one */
	v->call_overlap = __atomic_fetch_add(&g.calls_active, 1, __ATOMIC_SEQ_CST) > 0;
	if (v->call_overlap) /* the calls in progress learn at their return */
		__atomic_fetch_add(&g.call_epochs, 1, __ATOMIC_SEQ_CST);
	v->call_epoch = __atomic_load_n(&g.call_epochs, __ATOMIC_SEQ_CST);
	snapshot(&v->call_start);
}

/* on_call_ret runs before a ret of the function: the outermost one on the
 * vCPU that entered ends the call. */
static void on_call_ret(unsigned int vcpu_index, void *udata)
{
	struct vcpu *v = vcpu_get(vcpu_index);
	struct call c = {.vcpu = vcpu_index};
	(void)udata;
	if (v->call_depth == 0 || --v->call_depth > 0)
		return;
	snapshot(&c.n);
	/* Overlapped: another call was in progress at the entry, started
	 * during the call, or is still in progress at its return. */
	int others = __atomic_fetch_sub(&g.calls_active, 1, __ATOMIC_SEQ_CST) > 1;
	c.overlap = v->call_overlap || others ||
	            __atomic_load_n(&g.call_epochs, __ATOMIC_SEQ_CST) != v->call_epoch;
	uint64_t *end = (uint64_t *)&c.n;
	const uint64_t *start = (const uint64_t *)&v->call_start;
	for (size_t k = 0; k < sizeof(c.n) / sizeof(uint64_t); k++)
		end[k] -= start[k];
	pthread_mutex_lock(&g.call_lock);
	if (g.ncalls == g.calls_cap) {
		size_t cap = g.calls_cap ? 2 * g.calls_cap : 1024;
		struct call *grown = realloc(g.calls, cap * sizeof(*grown));
		if (!grown)
			abort();
		g.calls = grown;
		g.calls_cap = cap;
	}
	g.calls[g.ncalls++] = c;
	pthread_mutex_unlock(&g.call_lock);
}

/* is_ret reports whether an instruction is a near return (C3, C2 iw),
 * after any legacy prefixes (rep ret, bnd ret). */
static int is_ret(const uint8_t *b, size_t len)
{
	size_t i = 0;
	while (i < len && (b[i] == 0xf3 || b[i] == 0xf2 || b[i] == 0x66))
		i++;
	return i < len && (b[i] == 0xc3 || b[i] == 0xc2);
}

/* register_call hooks the entry and the returns of the counted function
 * among a block's instructions. */
static void register_call(struct qemu_plugin_insn *insn, const uint8_t *bytes, size_t len)
{
	uint64_t entry = __atomic_load_n(&g.entry, __ATOMIC_ACQUIRE);
	uint64_t pc = qemu_plugin_insn_vaddr(insn);
	if (!entry || pc < entry || pc >= entry + g.call_size)
		return;
	if (pc == entry)
		qemu_plugin_register_vcpu_insn_exec_cb(insn, on_call_entry, QEMU_PLUGIN_CB_NO_REGS, NULL);
	else if (is_ret(bytes, len))
		qemu_plugin_register_vcpu_insn_exec_cb(insn, on_call_ret, QEMU_PLUGIN_CB_NO_REGS, NULL);
}

/* The library's load base is where the dynamic loader maps its file at
 * offset 0: the mmap's fd is the library (same device and inode) and its
 * return value the base. */
static void mmap_entered(unsigned int vcpu_index, uint64_t fd, uint64_t off)
{
	struct vcpu *v = vcpu_get(vcpu_index);
	v->mmap_fd = (int64_t)fd;
	v->mmap_off = off;
}

static void mmap_returned(unsigned int vcpu_index, int64_t ret)
{
	struct vcpu *v = vcpu_get(vcpu_index);
	struct stat st;
	int64_t fd = v->mmap_fd;
	v->mmap_fd = -1;
	if (fd < 0 || (int32_t)fd < 0 || v->mmap_off != 0 || (ret < 0 && ret > -4096))
		return;
	if (fstat((int)fd, &st) == 0 && st.st_dev == g.call_dev && st.st_ino == g.call_ino)
		__atomic_store_n(&g.entry, (uint64_t)ret + g.call_at, __ATOMIC_RELEASE);
}

static void write_calls(FILE *f)
{
	fprintf(f, "callfn %llx %llu %s\n", (unsigned long long)g.entry,
	        (unsigned long long)g.call_size, g.call_path);
	for (size_t i = 0; i < g.ncalls; i++) {
		const struct call *c = &g.calls[i];
		fprintf(f, "call %u %d", c->vcpu, c->overlap);
		for (int p = 0; p < RP_NPREC; p++)
			fprintf(f, " %llu", (unsigned long long)c->n.flops[p]);
		fprintf(f, " %llu %llu %llu %llu\n", (unsigned long long)(c->n.dram_rd * g.line),
		        (unsigned long long)(c->n.dram_wr * g.line + c->n.nt_bytes),
		        (unsigned long long)c->n.bytes[0], (unsigned long long)c->n.bytes[1]);
	}
}

static void disas_record(struct qemu_plugin_insn *insn, struct rp_fp fp)
{
	char *text = qemu_plugin_insn_disas(insn);
	fprintf(g.disas_out, "%u %u %u %u\t%s\n", fp.flops, fp.prec, fp.width, fp.nt,
	        text ? text : "?");
	free(text);
}

static int guest_base_zero(uint64_t first);

/* exe_path is the file QEMU loaded: as the API says, else as exe= said. */
static const char *exe_path(void)
{
	const char *exe = qemu_plugin_path_to_binary ? qemu_plugin_path_to_binary() : NULL;
	return exe ? exe : g.exe;
}

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	struct tbinfo info = {.vaddr = qemu_plugin_tb_vaddr(tb), .ninsns = (uint32_t)n};
	uint32_t tid;
	int work = 0;
	(void)id;

	pthread_mutex_lock(&g.lock);
	if (g.ntb == 0) /* the program is loaded now, not yet at install */
		g.host_addrs = guest_base_zero(info.vaddr);
	tid = ++g.ntb; /* id 0: no block (a line no store dirtied) */
	if ((tid >> CHUNK_BITS) >= MAX_CHUNKS) {
		pthread_mutex_unlock(&g.lock);
		return; /* unreachable in practice: 2^28 translations */
	}
	if (!g.tbs[tid >> CHUNK_BITS]) {
		g.tbs[tid >> CHUNK_BITS] = calloc(CHUNK, sizeof(struct tbinfo));
		if (!g.tbs[tid >> CHUNK_BITS])
			abort();
	}
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint8_t buf[16];
		size_t len = qemu_plugin_insn_size(insn);
		const uint8_t *bytes = rp_insn_bytes(insn, buf, len < sizeof(buf) ? len : sizeof(buf));
		struct rp_fp fp = rp_classify(bytes, len);
		if (fp.flops) {
			info.flops[fp.prec] += fp.flops;
			info.wflops[fp.width] += fp.flops;
			work = 1;
		}
		if (g.disas_out)
			disas_record(insn, fp);
		if (g.call_path)
			register_call(insn, bytes, len);
		if (g.nlevels > 0)
			qemu_plugin_register_vcpu_mem_cb(insn, fp.nt ? on_mem_nt : g.call_path ? mem_access : on_mem,
			                                 QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW,
			                                 (void *)(uintptr_t)tid);
	}
	*tbinfo_get(tid) = info;
	if (work && count_inline(tb, tid))
		work = 0;
	pthread_mutex_unlock(&g.lock);
	if (work)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, on_tb_exec, QEMU_PLUGIN_CB_NO_REGS,
		                                     (void *)(uintptr_t)tid);
}

/* ---- output ---- */

static const char *prec_names[RP_NPREC] = {"fp64", "fp32", "fp16", "bf16", "fp80"};
static const char *width_names[RP_NWIDTH] = {"scalar", "128", "256", "x87"};

/* write_maps lists the process's mappings, with guest addresses. QEMU maps
 * guest code without host execute permission, so every mapping is listed;
 * rprof looks up the one holding each block. */
static void write_maps(FILE *f)
{
	FILE *m = fopen("/proc/self/maps", "r");
	char line[4352];
	if (!m)
		return;
	while (fgets(line, sizeof(line), m)) {
		unsigned long long lo, hi, off;
		char perms[8], path[4096] = "";
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &lo, &hi, perms, &off,
		           path) < 4)
			continue;
		fprintf(f, "map %llx %llx %llx %s %s\n", lo, hi, off,
		        perms, path[0] ? path : "[anon]");
	}
	fclose(m);
}

/* write_output sums the vCPUs and writes DIR/PID.GEN.txt (through a
 * temporary name, so that a file is whole or absent); exec_path, when set,
 * records that the process image ends in an execve of it. It returns the
 * file's name (malloc'd) or NULL. */
static char *write_output(const char *exec_path)
{
	uint64_t flops[RP_NPREC] = {0}, wflops[RP_NWIDTH] = {0};
	uint64_t ld = 0, st = 0, nt = 0, rd = 0, wr = 0, fills[MAX_LEVELS] = {0},
	         wbs[MAX_LEVELS] = {0};
	int nv = 0;
	char tmp[4200], name[4200];
	FILE *f;

	for (int i = 0; i < MAX_VCPUS; i++) {
		struct vcpu *v = vcpus[i];
		if (!v)
			continue;
		nv++;
		if (g.nlevels)
			flush(v);
		for (uint32_t c = 0; c <= (g.ntb >> CHUNK_BITS); c++)
			for (uint32_t k = 0; v->chunks[c] && k < CHUNK; k++) {
				ld += v->chunks[c][k].bytes[0];
				st += v->chunks[c][k].bytes[1];
			}
		nt += v->n.nt_bytes;
		rd += v->n.dram_rd;
		wr += v->n.dram_wr;
		for (int l = 0; l < g.nlevels; l++) {
			fills[l] += v->lv[l].fills;
			wbs[l] += v->lv[l].writebacks;
		}
	}
	if (nv < inline_vcpus())
		nv = inline_vcpus();
	snprintf(tmp, sizeof(tmp), "%s/.%d.%d.tmp", g.out, (int)getpid(), g.gen);
	f = fopen(tmp, "w");
	if (!f)
		return NULL;
	fprintf(f, "rprof-emulate 1\napi %d\npid %d\ngen %d\n", RP_QEMU_PLUGIN_API, (int)getpid(),
	        g.gen);
	{
		const char *exe = exe_path();
		char real[4096];
		if (!exe || !realpath(exe, real))
			snprintf(real, sizeof(real), "%s", exe ? exe : "?");
		fprintf(f, "exe %s\nhost_addrs %d\n", real, g.host_addrs);
	}
	if (exec_path)
		fprintf(f, "exec %s\n", exec_path);
	fprintf(f, "vcpus %d\noverflow %d\nline %u\n", nv, g.vcpu_overflow, g.line);
	for (int l = 0; l < g.nlevels; l++)
		fprintf(f, "level L%d %llu %u %llu %llu\n", l + 1, (unsigned long long)g.size[l],
		        g.ways[l], (unsigned long long)fills[l], (unsigned long long)wbs[l]);
	fprintf(f, "core %llu %llu\nnt %llu\ndram %llu %llu\n", (unsigned long long)ld,
	        (unsigned long long)st, (unsigned long long)nt,
	        (unsigned long long)(rd * g.line), (unsigned long long)(wr * g.line));

	for (uint32_t id = 0; id <= g.ntb; id++) {
		struct tbinfo *ti = id ? tbinfo_get(id) : NULL;
		uint64_t execs = inline_execs(id), dram_b = 0, core_b = 0;
		for (int i = 0; i < MAX_VCPUS; i++) {
			struct vcpu *v = vcpus[i];
			struct tbcount *c;
			if (!v || !(c = v->chunks[id >> CHUNK_BITS]))
				continue;
			execs += c[id & (CHUNK - 1)].execs;
			dram_b += c[id & (CHUNK - 1)].dram;
			core_b += c[id & (CHUNK - 1)].bytes[0] + c[id & (CHUNK - 1)].bytes[1];
		}
		if (ti)
			for (int p = 0; p < RP_NPREC; p++)
				flops[p] += execs * ti->flops[p];
		if (ti)
			for (int w = 0; w < RP_NWIDTH; w++)
				wflops[w] += execs * ti->wflops[w];
		if ((execs == 0 || !ti) && dram_b == 0 && core_b == 0)
			continue;
		fprintf(f, "tb %llx %llu %llu %llu", (unsigned long long)(ti ? ti->vaddr : 0),
		        (unsigned long long)execs, (unsigned long long)dram_b,
		        (unsigned long long)core_b);
		for (int p = 0; p < RP_NPREC; p++)
			fprintf(f, " %u", ti ? ti->flops[p] : 0);
		fputc('\n', f);
	}
	fprintf(f, "flops");
	for (int p = 0; p < RP_NPREC; p++)
		fprintf(f, " %s=%llu", prec_names[p], (unsigned long long)flops[p]);
	fprintf(f, "\nwidths");
	for (int w = 0; w < RP_NWIDTH; w++)
		fprintf(f, " %s=%llu", width_names[w], (unsigned long long)wflops[w]);
	fputc('\n', f);
	if (g.host_addrs)
		write_maps(f);
	if (g.call_path)
		write_calls(f);
	fprintf(f, "end\n");
	if (fclose(f) != 0) {
		unlink(tmp);
		return NULL;
	}
	for (int k = 0; k < 1000; k++) {
		if (k)
			snprintf(name, sizeof(name), "%s/%d.%d.%d.txt", g.out, (int)getpid(), g.gen, k);
		else
			snprintf(name, sizeof(name), "%s/%d.%d.txt", g.out, (int)getpid(), g.gen);
		if (link(tmp, name) == 0) { /* never replaces another process's file */
			unlink(tmp);
			return strdup(name);
		}
		if (errno != EEXIST)
			break;
	}
	unlink(tmp);
	return NULL;
}

static void on_exit_cb(qemu_plugin_id_t id, void *udata)
{
	(void)id;
	(void)udata;
	if (g.disas_out)
		fflush(g.disas_out);
	free(write_output(NULL));
}

/* ---- fork and exec ---- */

/* A forked child starts counting from zero with empty caches: its parent
 * reports what happened before the fork. */
static void atfork_child(void)
{
	for (int i = 0; i < MAX_VCPUS; i++) {
		struct vcpu *v = vcpus[i];
		if (!v)
			continue;
		for (int c = 0; c < MAX_CHUNKS; c++)
			free(v->chunks[c]);
		for (int l = 0; l < g.nlevels; l++) {
			free(v->lv[l].tags);
			free(v->lv[l].used);
			free(v->lv[l].mru);
			free(v->lv[l].dirty);
			free(v->lv[l].owner);
			free(v->lv[l].below);
		}
		free(v);
		vcpus[i] = NULL;
	}
	inline_reset();
	g.ncalls = 0;
	g.calls_active = 0;
	g.pid = getpid();
}

static char *pending_exec_file;

/* followable reads the start of path: an x86-64 ELF is run under this
 * QEMU as is, a #! script through its interpreter (whose name and optional
 * argument are stored in interp and iarg). */
static int followable(const char *path, char *interp, size_t n, char *iarg, size_t an)
{
	unsigned char h[512];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t got;
	if (fd < 0)
		return 0;
	got = read(fd, h, sizeof(h) - 1);
	close(fd);
	if (got >= 20 && memcmp(h, "\177ELF", 4) == 0)
		return h[4] == 2 && h[18] == 62 && h[19] == 0; /* ELFCLASS64, EM_X86_64 */
	if (got > 2 && h[0] == '#' && h[1] == '!') {
		char *s = (char *)h + 2, *e;
		h[got] = 0;
		e = strchr(s, '\n');
		if (!e)
			return 0;
		*e = 0;
		while (*s == ' ' || *s == '\t')
			s++;
		e = s + strcspn(s, " \t");
		snprintf(interp, n, "%.*s", (int)(e - s), s);
		while (*e == ' ' || *e == '\t')
			e++;
		size_t al = strlen(e);
		while (al && (e[al - 1] == ' ' || e[al - 1] == '\t'))
			al--;
		snprintf(iarg, an, "%.*s", (int)al, e);
		char i2[4096], a2[4096];
		return interp[0] && followable(interp, i2, sizeof(i2), a2, sizeof(a2));
	}
	return 0;
}

/* append_opt appends ",name=value" to the -plugin option in buf, its
 * commas doubled as QEMU's option syntax escapes them; nonzero when buf is
 * too small. */
static int append_opt(char *buf, size_t size, int *used, const char *name, const char *value)
{
	int n = snprintf(buf + *used, size - (size_t)*used, ",%s=", name);
	if (n < 0 || (size_t)(*used + n) >= size)
		return -1;
	*used += n;
	for (const char *c = value; *c; c++) {
		if ((size_t)*used + 3 > size)
			return -1;
		buf[(*used)++] = *c;
		if (*c == ',')
			buf[(*used)++] = ',';
	}
	buf[*used] = 0;
	return 0;
}

static void follow_exec(const char *path, char **argv, char **envp)
{
	char interp[4096], iarg[4096], plug[8192];
	char *nargv[4096];
	int k = 0;

	/* The guest's /proc/self/exe is its program (QEMU emulates that
	 * link); the plugin's would be QEMU itself. */
	if (strcmp(path, "/proc/self/exe") == 0 && exe_path())
		path = exe_path();
	if (access(path, X_OK) != 0)
		return; /* the exec fails as it would natively */
	free(pending_exec_file);
	pending_exec_file = write_output(path);
	if (!g.qemu || !g.self || !followable(path, interp, sizeof(interp), iarg, sizeof(iarg)))
		return; /* the image runs uncounted; rprof sees no next generation */
	int used = snprintf(plug, sizeof(plug), "%s,%s,gen=%d", g.self, g.args, g.gen + 1);
	if (used < 0 || (size_t)used >= sizeof(plug) ||
	    append_opt(plug, sizeof(plug), &used, "exe", interp[0] ? interp : path) ||
	    (g.cpu && append_opt(plug, sizeof(plug), &used, "cpu", g.cpu)))
		return;
	nargv[k++] = g.qemu;
	nargv[k++] = "-plugin";
	nargv[k++] = plug;
	if (g.cpu) {
		nargv[k++] = "-cpu";
		nargv[k++] = g.cpu;
	}
	nargv[k++] = "-0";
	if (interp[0]) {
		nargv[k++] = interp;
		nargv[k++] = interp;
		if (iarg[0])
			nargv[k++] = iarg;
		nargv[k++] = (char *)path;
		for (int i = 1; argv && argv[i] && k < 4095; i++)
			nargv[k++] = argv[i];
	} else {
		nargv[k++] = argv && argv[0] ? argv[0] : (char *)path;
		nargv[k++] = (char *)path;
		for (int i = 1; argv && argv[i] && k < 4095; i++)
			nargv[k++] = argv[i];
	}
	nargv[k] = NULL;
	/* envp holds guest pointers: translate them into a host array */
	size_t ne = 0;
	while (envp && envp[ne])
		ne++;
	char **nenv = calloc(ne + 1, sizeof(char *));
	if (!nenv)
		return;
	for (size_t i = 0; i < ne; i++)
		nenv[i] = envp[i];
	fflush(NULL);
	execve(g.qemu, nargv, nenv);
	free(nenv); /* the exec failed: the guest's own exec runs it uncounted */
}

static void on_syscall(qemu_plugin_id_t id, unsigned int vcpu_index, int64_t num, uint64_t a1,
                       uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6,
                       uint64_t a7, uint64_t a8)
{
	(void)id, (void)a4, (void)a7, (void)a8;
	if (num == 9 && g.call_path) /* mmap(addr, len, prot, flags, fd, off) */
		mmap_entered(vcpu_index, a5, a6);
	if (!g.host_addrs)
		return; /* guest memory cannot be read: execs are not followed */
	/* execve(path, argv, envp), or execveat(AT_FDCWD, path, argv, envp, 0) */
	if (num == 59)
		follow_exec((const char *)(uintptr_t)(a1),
		            (char **)(uintptr_t)(a2 ? a2 : 0),
		            (char **)(uintptr_t)(a3 ? a3 : 0));
	else if (num == 322 && (int)a1 == -100 && a5 == 0)
		follow_exec((const char *)(uintptr_t)(a2),
		            (char **)(uintptr_t)(a3 ? a3 : 0),
		            (char **)(uintptr_t)(a4 ? a4 : 0));
}

/* An exec that returned failed: the process goes on, and its counts so far
 * will be in its exit file. */
static void on_syscall_ret(qemu_plugin_id_t id, unsigned int vcpu_idx, int64_t num, int64_t ret)
{
	(void)id;
	if (num == 9 && g.call_path)
		mmap_returned(vcpu_idx, ret);
	if ((num == 59 || num == 322) && pending_exec_file) {
		unlink(pending_exec_file);
		free(pending_exec_file);
		pending_exec_file = NULL;
	}
}

/* ---- installation ---- */

/* guest_base_zero checks that guest addresses are host addresses (QEMU
 * places a 64-bit guest at guest_base 0 unless told otherwise): the host
 * mapping holding the program's first code address must be the program's
 * file; where the API cannot say that address, the one holding the first
 * translated block (first) must be a file other than QEMU itself (the
 * program or its interpreter). Otherwise rprof cannot read guest memory
 * or name functions, and says so. */
static int guest_base_zero(uint64_t first)
{
	const char *exe = exe_path();
	uint64_t start = qemu_plugin_start_code ? qemu_plugin_start_code() : 0;
	FILE *m = fopen("/proc/self/maps", "r");
	char line[4352], real[4096], self[4096];
	int ok = 0;
	if (!m || (start && !exe))
		goto out;
	if (start && !realpath(exe, real))
		snprintf(real, sizeof(real), "%s", exe);
	if (!start && !realpath("/proc/self/exe", self))
		goto out;
	while (fgets(line, sizeof(line), m)) {
		unsigned long long lo, hi, off;
		char perms[8], path[4096] = "";
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &lo, &hi, perms, &off,
		           path) < 5)
			continue;
		if (start && start >= lo && start < hi) {
			ok = strcmp(path, real) == 0;
			break;
		}
		if (!start && first >= lo && first < hi) {
			ok = path[0] == '/' && strcmp(path, self) != 0;
			break;
		}
	}
out:
	if (m)
		fclose(m);
	return ok;
}

static int parse_cache(const char *s)
{
	if (strcmp(s, "none") == 0) {
		g.nlevels = 0;
		return 0;
	}
	g.nlevels = 0;
	while (*s) {
		char *end;
		unsigned long long size = strtoull(s, &end, 10);
		if (*end != ':' || g.nlevels == MAX_LEVELS)
			return -1;
		unsigned long ways = strtoul(end + 1, &end, 10);
		if ((*end != ':' && *end) || size == 0 || ways == 0)
			return -1;
		g.size[g.nlevels] = size;
		g.ways[g.nlevels] = (uint32_t)ways;
		g.nlevels++;
		s = *end ? end + 1 : end;
	}
	return 0;
}

RP_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
                                  char **argv)
{
	char args[8192] = "";
	size_t used = 0;
	int have_cache = 0;

	rp_api_install(info);
	if (info->system_emulation) {
		fprintf(stderr, "rprof plugin: user-mode emulation only\n");
		return -1;
	}
	for (int i = 0; i < argc; i++) {
		char *a = argv[i], *v = strchr(a, '=');
		int keep = 1;
		if (!v) {
			fprintf(stderr, "rprof plugin: bad argument %s\n", a);
			return -1;
		}
		v++;
		if (strncmp(a, "out=", 4) == 0)
			g.out = v;
		else if (strncmp(a, "line=", 5) == 0)
			g.line = (uint32_t)strtoul(v, NULL, 10);
		else if (strncmp(a, "cache=", 6) == 0) {
			if (parse_cache(v) != 0) {
				fprintf(stderr, "rprof plugin: bad cache %s\n", v);
				return -1;
			}
			have_cache = 1;
		} else if (strncmp(a, "qemu=", 5) == 0)
			g.qemu = v;
		else if (strncmp(a, "self=", 5) == 0)
			g.self = v;
		else if (strncmp(a, "cpu=", 4) == 0) {
			g.cpu = v;
			keep = 0; /* follow_exec adds it, escaped again */
		} else if (strncmp(a, "exe=", 4) == 0) {
			g.exe = v;
			keep = 0; /* each image has its own */
		}
		else if (strncmp(a, "gen=", 4) == 0) {
			g.gen = atoi(v);
			keep = 0;
		} else if (strncmp(a, "disas=", 6) == 0)
			g.disas = atoi(v);
		else if (strncmp(a, "call=", 5) == 0)
			g.call_path = v;
		else if (strncmp(a, "call_at=", 8) == 0)
			g.call_at = strtoull(v, NULL, 16);
		else if (strncmp(a, "call_size=", 10) == 0)
			g.call_size = strtoull(v, NULL, 10);
		else {
			fprintf(stderr, "rprof plugin: unknown argument %s\n", a);
			return -1;
		}
		if (keep) {
			int w = snprintf(args + used, sizeof(args) - used, "%s%s", used ? "," : "", a);
			if (w < 0 || (size_t)w >= sizeof(args) - used)
				return -1;
			used += (size_t)w;
		}
	}
	if (!g.out || g.line == 0 || (g.line & (g.line - 1))) {
		fprintf(stderr, "rprof plugin: need out=DIR and a power-of-two line\n");
		return -1;
	}
	if (!have_cache)
		g.nlevels = 0;
	if (g.call_path) {
		struct stat st;
		if (stat(g.call_path, &st) != 0 || g.call_size == 0) {
			fprintf(stderr, "rprof plugin: call=%s: need a readable library and call_size\n",
			        g.call_path);
			return -1;
		}
		g.call_dev = st.st_dev;
		g.call_ino = st.st_ino;
	}
	g.args = strdup(args);
	while ((1u << g.line_shift) < g.line)
		g.line_shift++;
	g.tbs = calloc(MAX_CHUNKS, sizeof(*g.tbs));
	if (!g.tbs)
		return -1;
#ifdef RP_HAVE_SCOREBOARD
	g.execs = calloc(MAX_CHUNKS, sizeof(*g.execs));
	if (!g.execs)
		return -1;
#endif
	g.pid = getpid();
	if (g.disas) {
		char name[4200];
		snprintf(name, sizeof(name), "%s/disas.%d.%d.txt", g.out, (int)getpid(), g.gen);
		g.disas_out = fopen(name, "w");
	}
	pthread_atfork(NULL, NULL, atfork_child);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
	qemu_plugin_register_vcpu_syscall_cb(id, on_syscall);
	qemu_plugin_register_vcpu_syscall_ret_cb(id, on_syscall_ret);
	qemu_plugin_register_atexit_cb(id, on_exit_cb, NULL);
	return 0;
}
