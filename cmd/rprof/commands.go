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
