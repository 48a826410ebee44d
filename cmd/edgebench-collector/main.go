// Command edgebench-collector is edgebench's central side: it runs (or
// subscribes to) the MQTT broker, stores the fleet's results in SQLite,
// triggers tests and compares devices, servers and builds.
package main

import "github.com/edgebench/edgebench/internal/cli"

// version is set at build time with -ldflags '-X main.version=...'.
var version = "dev"

func program() *cli.Program {
	return &cli.Program{Name: "edgebench-collector", Version: version, Subcommands: []cli.Subcommand{
		{Name: "serve", Args: "[flags]", Summary: "broker, store and web UI", Run: cmdServe},
		{Name: "trigger", Args: "[select] URL [flags]", Summary: "run a load test on devices", Run: cmdTrigger},
		{Name: "cancel", Args: "CMD_ID [flags]", Summary: "stop a triggered test on the devices running it", Run: cmdCancel},
		{Name: "schedule", Args: "add|list|runs|rm|pause|resume", Summary: "fire triggers by themselves", Run: cmdSchedule},
		{Name: "changes", Args: "[--since 7d] [flags]", Summary: "lasting changes found in each series", Run: cmdChanges},
		{Name: "rebuild-series", Args: "[flags]", Summary: "rebuild the series and their changes from the stored results", Run: cmdRebuildSeries},
		{Name: "devices", Args: "[flags]", Summary: "list the devices", Run: cmdDevices},
		{Name: "runs", Args: "[flags]", Summary: "list stored results", Run: cmdRuns},
		{Name: "show", Args: "RUN [flags]", Summary: "print a stored result's report", Run: cmdShow},
		{Name: "compare", Args: "--by KEY [flags]", Summary: "compare groups of runs", Run: cmdCompare},
		{Name: "export", Args: "--format F [flags]", Summary: "write runs as csv, json or benchfmt", Run: cmdExport},
	}}
}

func main() { program().Main() }
