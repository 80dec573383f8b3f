// Package gate compares roofline points and decides whether a new point is a
// performance regression against a baseline: the logic behind `rprof
// compare` and `rprof gate`, and their CI outputs (text table, Markdown
// summary, JUnit XML, GitHub Actions annotations, Go benchmark format).
//
// Two kinds of figure are compared differently:
//
//   - Timed figures (time, GFLOP/s, fraction of attainable) vary between
//     repetitions. They are compared with a two-sample test on the recorded
//     per-repetition samples: Welch's t by default, Mann-Whitney U on
//     request. When a document kept only a mean and its confidence interval,
//     the standard deviation is recovered from the interval and Welch's t is
//     run on the summaries.
//   - Counted figures (W, Q, intensity) barely vary between runs, so they are
//     compared against a relative tolerance instead of a test.
//
// The gate fails only on a change that is both statistically significant and
// beyond its limit, so noise passes. When the machine differs from the
// baseline's, it compares fractions of attainable performance instead of
// time; on the same machine under roofs measured again, a regression must
// show in both time and fraction. So a changed roof is never reported as a
// kernel regression.
package gate
