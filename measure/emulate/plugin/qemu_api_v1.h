/*
 * What version 1 of the QEMU TCG plugin API (QEMU 6.0 to 8.2) has of its
 * own among the parts rprof's plugin uses (the rest: qemu_api_common.h).
 * A newer API version is one more file like this one, declaring what
 * changed and defining rp_insn_bytes() for it (and RP_HAVE_SCOREBOARD where
 * the version has per-vCPU scoreboards).
 */
#ifndef RPROF_QEMU_API_V1_H
#define RPROF_QEMU_API_V1_H

#include "qemu_api_common.h"

#define RP_QEMU_PLUGIN_API 1

const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);

/* rp_api_install learns what the running QEMU offers (nothing to learn in
 * version 1). */
static inline void rp_api_install(const qemu_info_t *info) { (void)info; }

/* rp_insn_bytes returns the bytes of insn (version 1 hands out a pointer). */
static inline const uint8_t *rp_insn_bytes(const struct qemu_plugin_insn *insn, uint8_t *buf,
                                           size_t len)
{
	(void)buf;
	(void)len;
	return qemu_plugin_insn_data(insn);
}

#endif
