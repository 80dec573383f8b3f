package main

import (
	"strings"
	"testing"

	"github.com/rprof/rprof/roofline"
)

func TestScopeWhyNamesTheRuleAndTheParallelism(t *testing.T) {
	tests := []struct {
		p    roofline.Point
		want []string
	}{
		{roofline.Point{Threads: 1, ThreadsRule: roofline.ScopeRuleParallelism, Parallelism: 1.01}, []string{"parallelism", "1.01", "1 thread"}},
		{roofline.Point{Threads: 4, ThreadsRule: roofline.ScopeRuleParallelism, Parallelism: 2.9}, []string{"3 threads", "rprof roofs --threads 3"}},
		{roofline.Point{Threads: 2, ThreadsRule: roofline.ScopeRuleAsked}, []string{"--threads"}},
		{roofline.Point{Threads: 2, ThreadsRule: roofline.ScopeRuleCPUs}, []string{"parallelism unknown", "CPUs"}},
		{roofline.Point{Threads: 2}, []string{"not recorded"}},
	}
	for _, tt := range tests {
		got := scopeWhy(&tt.p)
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%+v: %q lacks %q", tt.p, got, w)
			}
		}
	}
}
