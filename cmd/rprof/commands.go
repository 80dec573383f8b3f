package main

// commands is the table of subcommands, in the order `rprof help` lists them.
func commands() []*command {
	return []*command{
		cmdRoofs,
		cmdRun,
		cmdMerge,
		cmdDNN,
		cmdImport,
		cmdPlot,
		cmdReport,
		cmdCompare,
		cmdGate,
		cmdEvents,
		cmdDoctor,
		cmdValidate,
	}
}

// subcommands are the commands under another that have help of their own
// ('rprof help dnn bench'), by the name of their flag set.
func subcommands() []*command {
	return []*command{cmdDNNBench}
}
