/*
 * What versions 2 and later of the QEMU TCG plugin API (QEMU 9.0 and
 * later) have of their own among the parts rprof's plugin uses (the rest:
 * qemu_api_common.h). Written from the API documentation of QEMU 10.0's
 * plugin header (Debian 13's qemu source package, 1:10.0.13+ds-0+deb13u1,
 * include/qemu/qemu-plugin.h), whose version history lists what changed: version 2 removed the shared
 * inline operations and the vCPU counts, version 3 made
 * qemu_plugin_insn_data copy into a caller's buffer, version 4 added
 * qemu_plugin_read_memory_vaddr); see docs/emulate.md. The plugin declares
 * version 2, the oldest these QEMUs load, and calls qemu_plugin_insn_data
 * in the form the running QEMU's version has.
 */
#ifndef RPROF_QEMU_API_V2_H
#define RPROF_QEMU_API_V2_H

#include "qemu_api_common.h"

#define RP_QEMU_PLUGIN_API 2

/* version 3 and later; version 2's function of the same name returned a
 * pointer to the bytes, declared here under another C name */
size_t qemu_plugin_insn_data(const struct qemu_plugin_insn *insn, void *dest, size_t len);
const void *rp_insn_data_v2(const struct qemu_plugin_insn *insn) __asm__("qemu_plugin_insn_data");

/* Scoreboards (version 2 on): an array with one element per vCPU, which
 * inline operations address per vCPU, so threads never share a counter. */
#define RP_HAVE_SCOREBOARD 1
struct qemu_plugin_scoreboard;
typedef struct {
	struct qemu_plugin_scoreboard *score;
	size_t offset;
} qemu_plugin_u64;
enum qemu_plugin_op {
	QEMU_PLUGIN_INLINE_ADD_U64,
};
struct qemu_plugin_scoreboard *qemu_plugin_scoreboard_new(size_t element_size);
void *qemu_plugin_scoreboard_find(struct qemu_plugin_scoreboard *score, unsigned int vcpu_index);
uint64_t qemu_plugin_u64_sum(qemu_plugin_u64 entry);
int qemu_plugin_num_vcpus(void);
void qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(struct qemu_plugin_tb *tb,
                                                       enum qemu_plugin_op op,
                                                       qemu_plugin_u64 entry, uint64_t imm);

/* rp_api_cur is the plugin API version of the running QEMU. */
static int rp_api_cur;

/* rp_api_install learns what the running QEMU offers. */
static inline void rp_api_install(const qemu_info_t *info) { rp_api_cur = info->version.cur; }

/* rp_insn_bytes returns the bytes of insn: copied into buf (len bytes)
 * from version 3 on, a pointer QEMU hands out in version 2. */
static inline const uint8_t *rp_insn_bytes(const struct qemu_plugin_insn *insn, uint8_t *buf,
                                           size_t len)
{
	if (rp_api_cur >= 3) {
		qemu_plugin_insn_data(insn, buf, len);
		return buf;
	}
	return rp_insn_data_v2(insn);
}

#endif
