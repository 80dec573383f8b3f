package main

import (
	"fmt"

	"github.com/rprof/rprof/roofline"
)

// scopeWhy says in words which rule chose p's thread scope, for a run's
// summary, and which roofs to measure when the scope lacks them.
func scopeWhy(p *roofline.Point) string {
	switch p.ThreadsRule {
	case roofline.ScopeRuleAsked:
		return "as asked with --threads"
	case roofline.ScopeRuleRecorded:
		return "the scope the point was placed under when measured"
	case roofline.ScopeRuleParallelism:
		used := roofline.UsedThreads(p.Parallelism)
		s := fmt.Sprintf("the program's parallelism: CPU time over wall time %.2f, %s", p.Parallelism, threadsWord(used))
		if p.Threads != used {
			s += fmt.Sprintf("; no roofs of %s were measured (rprof roofs --threads %d)", threadsWord(used), used)
		}
		return s
	case roofline.ScopeRuleCPUs:
		return "parallelism unknown: the largest measured scope not above the CPUs it could use"
	case roofline.ScopeRuleSmallest:
		return "parallelism and CPUs unknown: the smallest measured scope"
	}
	return "rule not recorded"
}

func threadsWord(n int) string {
	if n == 1 {
		return "1 thread"
	}
	return fmt.Sprintf("%d threads", n)
}
