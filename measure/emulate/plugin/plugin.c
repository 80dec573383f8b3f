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
 *   self=PATH      this plugin's file, to follow execve (optional)
 *   gen=N          the generation of a followed exec (internal)
 *   disas=1        also list every translated FP instruction with QEMU's
 *                  disassembly (tests cross-check the decoder with it)
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
	uint64_t core; /* bytes loaded and stored by instructions */
};

struct level {
	uint32_t sets, ways;
	uint64_t mask; /* sets-1 when sets is a power of two, else 0 */
	uint64_t *tags; /* line+1, most recent first within a set; 0 empty */
	uint8_t *dirty;
	uint32_t *owner; /* the block that last wrote a dirty line */
	uint64_t fills, writebacks; /* lines from and to the level below */
};

struct vcpu {
	uint64_t last_line; /* the line the previous access touched */
	int last_dirty;     /* ...and whether it is dirty in L1 */
	uint64_t last_nt;   /* the line of the previous non-temporal store */
	uint64_t ld_bytes, st_bytes, nt_bytes;
	uint64_t dram_rd, dram_wr; /* lines */
	struct level lv[MAX_LEVELS];
	struct tbcount *chunks[MAX_CHUNKS];
};

static struct {
	char *out;
	char *qemu, *self, *args;
	int gen;
	int disas;
	uint32_t line;
	unsigned line_shift;
	int nlevels;
	uint64_t size[MAX_LEVELS];
	uint32_t ways[MAX_LEVELS];
	pid_t pid;
	int host_addrs; /* guest addresses are host addresses */
	int vcpu_overflow;
	int execs_followed, execs_unfollowed;
	char exec_into[4096];

	pthread_mutex_t lock; /* translation and vCPU creation */
	uint32_t ntb;
	struct tbinfo **tbs;  /* MAX_CHUNKS chunks of CHUNK blocks */
	struct vcpu **vcpus; /* MAX_VCPUS */
	FILE *disas_out;
} g = {.line = 64, .lock = PTHREAD_MUTEX_INITIALIZER};

static struct vcpu *vcpu_new(void)
{
	struct vcpu *v = calloc(1, sizeof(*v));
	if (!v)
		abort();
	v->last_line = v->last_nt = NO_LINE;
	for (int i = 0; i < g.nlevels; i++) {
		struct level *l = &v->lv[i];
		uint64_t lines = g.size[i] / g.line;
		l->ways = g.ways[i];
		l->sets = (uint32_t)(lines / l->ways);
		if (l->sets == 0)
			l->sets = 1;
		l->mask = (l->sets & (l->sets - 1)) == 0 ? l->sets - 1 : 0;
		l->tags = calloc((size_t)l->sets * l->ways, sizeof(uint64_t));
		l->dirty = calloc((size_t)l->sets * l->ways, 1);
		l->owner = calloc((size_t)l->sets * l->ways, sizeof(uint32_t));
		if (!l->tags || !l->dirty || !l->owner)
			abort();
	}
	return v;
}

static inline struct vcpu *vcpu_get(unsigned int idx)
{
	struct vcpu *v;
	if (idx >= MAX_VCPUS) {
		/* More live threads than slots: share the last one (races), and
		 * say so in the output. */
		__atomic_store_n(&g.vcpu_overflow, 1, __ATOMIC_RELAXED);
		idx = MAX_VCPUS - 1;
	}
	v = __atomic_load_n(&g.vcpus[idx], __ATOMIC_ACQUIRE);
	if (v)
		return v;
	pthread_mutex_lock(&g.lock);
	v = g.vcpus[idx];
	if (!v) {
		v = vcpu_new();
		__atomic_store_n(&g.vcpus[idx], v, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&g.lock);
	return v;
}

/* tbcount_get returns this vCPU's counters of block id; only the vCPU's
 * own thread writes them, so no atomics are needed. */
static inline struct tbcount *tbcount_get(struct vcpu *v, uint32_t id)
{
	struct tbcount *c = v->chunks[id >> CHUNK_BITS];
	if (!c) {
		c = calloc(CHUNK, sizeof(*c));
		if (!c)
			abort();
		__atomic_store_n(&v->chunks[id >> CHUNK_BITS], c, __ATOMIC_RELEASE);
	}
	return &c[id & (CHUNK - 1)];
}

static inline struct tbinfo *tbinfo_get(uint32_t id)
{
	return &g.tbs[id >> CHUNK_BITS][id & (CHUNK - 1)];
}

/* ---- cache model: set-associative LRU, write-back, write-allocate ---- */

static void to_level(struct vcpu *v, int lvl, uint64_t line, uint32_t owner);

/* set_of returns the tags of line's set, and its dirty bits and owners. */
static inline uint64_t *set_of(struct level *l, uint64_t line, uint8_t **dirty, uint32_t **owner)
{
	uint64_t set = l->mask ? (line & l->mask) : (line % l->sets);
	*dirty = l->dirty + set * l->ways;
	*owner = l->owner + set * l->ways;
	return l->tags + set * l->ways;
}

/* to_front moves way i of a set to the front (most recent). */
static inline void to_front(uint64_t *t, uint8_t *d, uint32_t *o, uint32_t i)
{
	uint64_t tag = t[i];
	uint8_t dd = d[i];
	uint32_t oo = o[i];
	memmove(t + 1, t, i * sizeof(*t));
	memmove(d + 1, d, i);
	memmove(o + 1, o, i * sizeof(*o));
	t[0] = tag;
	d[0] = dd;
	o[0] = oo;
}

static void dram(struct vcpu *v, int write, uint32_t tb)
{
	if (write)
		v->dram_wr++;
	else
		v->dram_rd++;
	tbcount_get(v, tb)->dram += g.line;
}

/* find_way returns the way of line's tag in a set, or ways when absent. */
static inline uint32_t find_way(const uint64_t *t, uint32_t ways, uint64_t tag)
{
	uint32_t i;
	for (i = 0; i < ways; i++)
		if (t[i] == tag)
			break;
	return i;
}

/* evict makes room at the back of a set, writing a dirty victim down. */
static inline void evict(struct vcpu *v, int lvl, uint64_t *t, uint8_t *d, uint32_t *o)
{
	struct level *l = &v->lv[lvl];
	uint32_t i = l->ways - 1;
	if (t[i] && d[i]) {
		l->writebacks++;
		to_level(v, lvl + 1, t[i] - 1, o[i]);
	}
	memmove(t + 1, t, i * sizeof(*t));
	memmove(d + 1, d, i);
	memmove(o + 1, o, i * sizeof(*o));
}

/* access brings line into level lvl (a demand access: a load, a store, or
 * a fill for the level above) and updates its recency. DRAM reads count
 * for the accessing block tb; a store makes tb the line's owner, whose
 * DRAM writes its write-back will count for. */
static void access_line(struct vcpu *v, int lvl, uint64_t line, int store, uint32_t tb)
{
	if (lvl == g.nlevels) {
		dram(v, 0, tb);
		return;
	}
	struct level *l = &v->lv[lvl];
	uint8_t *d;
	uint32_t *o;
	uint64_t *t = set_of(l, line, &d, &o);
	uint32_t i = find_way(t, l->ways, line + 1);
	if (i < l->ways) { /* hit */
		to_front(t, d, o, i);
		if (store) {
			d[0] = 1;
			o[0] = tb;
		}
		return;
	}
	l->fills++;
	access_line(v, lvl + 1, line, 0, tb);
	evict(v, lvl, t, d, o);
	t[0] = line + 1;
	d[0] = (uint8_t)store;
	o[0] = store ? tb : 0;
}

/* to_level writes a dirty line evicted from the level above into level
 * lvl: it marks a present line dirty (keeping its recency) or allocates it
 * without a fill, since the whole line is written. */
static void to_level(struct vcpu *v, int lvl, uint64_t line, uint32_t owner)
{
	if (lvl == g.nlevels) {
		dram(v, 1, owner);
		return;
	}
	struct level *l = &v->lv[lvl];
	uint8_t *d;
	uint32_t *o;
	uint64_t *t = set_of(l, line, &d, &o);
	uint32_t i = find_way(t, l->ways, line + 1);
	if (i < l->ways) {
		d[i] = 1;
		o[i] = owner;
		return;
	}
	evict(v, lvl, t, d, o);
	t[0] = line + 1;
	d[0] = 1;
	o[0] = owner;
}

/* invalidate drops line from every level (a non-temporal store takes it
 * out of the caches; its bytes go to DRAM). */
static void invalidate(struct vcpu *v, uint64_t line)
{
	for (int lvl = 0; lvl < g.nlevels; lvl++) {
		struct level *l = &v->lv[lvl];
		uint8_t *d;
		uint32_t *o;
		uint64_t *t = set_of(l, line, &d, &o);
		uint32_t i = find_way(t, l->ways, line + 1), n = l->ways - 1;
		if (i < l->ways) {
			memmove(t + i, t + i + 1, (n - i) * sizeof(*t));
			memmove(d + i, d + i + 1, n - i);
			memmove(o + i, o + i + 1, (n - i) * sizeof(*o));
			t[n] = 0;
			d[n] = 0;
			o[n] = 0;
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
				to_level(v, lvl + 1, l->tags[i] - 1, l->owner[i]);
			}
	}
	v->last_line = NO_LINE;
}

/* ---- callbacks ---- */

static void on_tb_exec(unsigned int vcpu_index, void *udata)
{
	struct vcpu *v = vcpu_get(vcpu_index);
	tbcount_get(v, (uint32_t)(uintptr_t)udata)->execs++;
}

static void on_mem(unsigned int vcpu_index, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
	struct vcpu *v = vcpu_get(vcpu_index);
	uintptr_t ud = (uintptr_t)udata;
	uint32_t tb = (uint32_t)(ud >> 1);
	uint64_t size = 1ull << qemu_plugin_mem_size_shift(info);
	int store = qemu_plugin_mem_is_store(info);
	uint64_t first = vaddr >> g.line_shift, last = (vaddr + size - 1) >> g.line_shift;

	if (store)
		v->st_bytes += size;
	else
		v->ld_bytes += size;
	tbcount_get(v, tb)->core += size;

	if (store && (ud & 1)) { /* non-temporal: to DRAM, once per line */
		for (uint64_t line = first; line <= last; line++) {
			if (line != v->last_nt) {
				invalidate(v, line);
				v->nt_bytes += g.line;
				tbcount_get(v, tb)->dram += g.line;
				v->last_nt = line;
			}
		}
		v->last_line = NO_LINE;
		return;
	}
	for (uint64_t line = first; line <= last; line++) {
		/* Several accesses to one line in a row (a ymm load arrives as
		 * four 8-byte ones) change nothing after the first: the line is
		 * the most recent in L1 already. */
		if (line == v->last_line && (!store || v->last_dirty))
			continue;
		int was = line == v->last_line && v->last_dirty;
		access_line(v, 0, line, store, tb);
		v->last_line = line;
		v->last_dirty = was || store;
	}
}

static void disas_record(struct qemu_plugin_insn *insn, struct rp_fp fp)
{
	char *text = qemu_plugin_insn_disas(insn);
	fprintf(g.disas_out, "%u %u %u %u\t%s\n", fp.flops, fp.prec, fp.width, fp.nt,
	        text ? text : "?");
	free(text);
}

static int guest_base_zero(void);

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	struct tbinfo info = {.vaddr = qemu_plugin_tb_vaddr(tb), .ninsns = (uint32_t)n};
	uint32_t tid;
	int work = 0;
	(void)id;

	pthread_mutex_lock(&g.lock);
	if (g.ntb == 0) /* the program is loaded now, not yet at install */
		g.host_addrs = guest_base_zero();
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
		if (g.nlevels > 0)
			qemu_plugin_register_vcpu_mem_cb(insn, on_mem, QEMU_PLUGIN_CB_NO_REGS,
			                                 QEMU_PLUGIN_MEM_RW,
			                                 (void *)(((uintptr_t)tid << 1) | fp.nt));
	}
	*tbinfo_get(tid) = info;
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
		struct vcpu *v = g.vcpus[i];
		if (!v)
			continue;
		nv++;
		if (g.nlevels)
			flush(v);
		ld += v->ld_bytes;
		st += v->st_bytes;
		nt += v->nt_bytes;
		rd += v->dram_rd;
		wr += v->dram_wr;
		for (int l = 0; l < g.nlevels; l++) {
			fills[l] += v->lv[l].fills;
			wbs[l] += v->lv[l].writebacks;
		}
	}
	snprintf(tmp, sizeof(tmp), "%s/.%d.%d.tmp", g.out, (int)getpid(), g.gen);
	f = fopen(tmp, "w");
	if (!f)
		return NULL;
	fprintf(f, "rprof-emulate 1\napi %d\npid %d\ngen %d\n", RP_QEMU_PLUGIN_API, (int)getpid(),
	        g.gen);
	{
		const char *exe = qemu_plugin_path_to_binary();
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
		uint64_t execs = 0, dram_b = 0, core_b = 0;
		for (int i = 0; i < MAX_VCPUS; i++) {
			struct vcpu *v = g.vcpus[i];
			struct tbcount *c;
			if (!v || !(c = v->chunks[id >> CHUNK_BITS]))
				continue;
			execs += c[id & (CHUNK - 1)].execs;
			dram_b += c[id & (CHUNK - 1)].dram;
			core_b += c[id & (CHUNK - 1)].core;
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
		struct vcpu *v = g.vcpus[i];
		if (!v)
			continue;
		for (int c = 0; c < MAX_CHUNKS; c++)
			free(v->chunks[c]);
		for (int l = 0; l < g.nlevels; l++) {
			free(v->lv[l].tags);
			free(v->lv[l].dirty);
			free(v->lv[l].owner);
		}
		free(v);
		g.vcpus[i] = NULL;
	}
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

static void follow_exec(const char *path, char **argv, char **envp)
{
	char interp[4096], iarg[4096], plug[8192];
	char *nargv[4096];
	int k = 0;

	if (access(path, X_OK) != 0)
		return; /* the exec fails as it would natively */
	free(pending_exec_file);
	pending_exec_file = write_output(path);
	if (!g.qemu || !g.self || !followable(path, interp, sizeof(interp), iarg, sizeof(iarg)))
		return; /* the image runs uncounted; rprof sees no next generation */
	snprintf(plug, sizeof(plug), "%s,%s,gen=%d", g.self, g.args, g.gen + 1);
	nargv[k++] = g.qemu;
	nargv[k++] = "-plugin";
	nargv[k++] = plug;
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
	(void)id, (void)vcpu_index, (void)a6, (void)a7, (void)a8;
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
	(void)id, (void)vcpu_idx, (void)ret;
	if ((num == 59 || num == 322) && pending_exec_file) {
		unlink(pending_exec_file);
		free(pending_exec_file);
		pending_exec_file = NULL;
	}
}

/* ---- installation ---- */

/* find_guest_base checks that guest addresses are host addresses (QEMU
 * places a 64-bit guest at guest_base 0 unless told otherwise): the host
 * mapping holding the guest's first code address must be the guest
 * program's file. Otherwise rprof cannot read guest memory or name
 * functions, and says so. */
static int guest_base_zero(void)
{
	const char *exe = qemu_plugin_path_to_binary();
	uint64_t start = qemu_plugin_start_code();
	FILE *m = fopen("/proc/self/maps", "r");
	char line[4352], real[4096];
	int ok = 0;
	if (!m || !exe)
		goto out;
	if (!realpath(exe, real))
		snprintf(real, sizeof(real), "%s", exe);
	while (fgets(line, sizeof(line), m)) {
		unsigned long long lo, hi, off;
		char perms[8], path[4096] = "";
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &lo, &hi, perms, &off,
		           path) < 5)
			continue;
		if (start >= lo && start < hi) {
			ok = strcmp(path, real) == 0;
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
		else if (strncmp(a, "gen=", 4) == 0) {
			g.gen = atoi(v);
			keep = 0;
		} else if (strncmp(a, "disas=", 6) == 0)
			g.disas = atoi(v);
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
	g.args = strdup(args);
	while ((1u << g.line_shift) < g.line)
		g.line_shift++;
	g.tbs = calloc(MAX_CHUNKS, sizeof(*g.tbs));
	g.vcpus = calloc(MAX_VCPUS, sizeof(*g.vcpus));
	if (!g.tbs || !g.vcpus)
		return -1;
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
