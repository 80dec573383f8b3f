/*
 * Where rprof's CUPTI injection library reads a kernel activity record.
 * CUPTI fills the newest kernel record version of the library loaded at
 * run time (CUpti_ActivityKernel4 to 8 in CUPTI 11.8, 9 and later in
 * 12.x); these offsets are the prefix every version shares in CUPTI
 * 11.8's cupti_activity.h (TestKernelRecordLayoutIsCUPTIs checks them for
 * 4 to 8 against those headers). Later fields differ between versions and
 * are not read.
 */
#ifndef RPROF_CUPTI_LAYOUT_H
#define RPROF_CUPTI_LAYOUT_H

#define OFF_KIND 0
#define OFF_START 16
#define OFF_END 24
#define OFF_DEVICE 40
#define OFF_CONTEXT 44
#define OFF_STREAM 48
#define OFF_GRID 52
#define OFF_BLOCK 64
#define OFF_CORRELATION 92
#define OFF_NAME 104

#endif
