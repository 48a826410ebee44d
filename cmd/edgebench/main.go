// Command edgebench is the device binary: it load-tests a local HTTP server,
// serves a built-in target, samples the machine and runs as an MQTT agent.
package main

import "github.com/edgebench/edgebench/internal/cli"

// version is set at build time with -ldflags '-X main.version=...'.
var version = "dev"

func program() *cli.Program {
	return &cli.Program{Name: "edgebench", Version: version, Subcommands: []cli.Subcommand{
		{Name: "run", Args: "URL [flags]", Summary: "load-test URL and print a report", Run: cmdRun},
		{Name: "ab", Args: "[ab's flags] URL", Summary: "load-test URL as ApacheBench 2.3 does, and print ab's report", Run: cmdAB},
		{Name: "wrk", Args: "[wrk's flags] URL", Summary: "load-test URL as wrk 4 does, and print wrk's report", Run: cmdWrk},
		{Name: "capacity", Args: "--slo 'p99<50ms' URL [flags]", Summary: "find the highest open-loop rate URL serves within an SLO", Run: cmdCapacity},
		{Name: "serve", Args: "[flags]", Summary: "serve the built-in target", Run: cmdServe},
		{Name: "probe", Args: "[flags]", Summary: "print a live table of the machine's figures", Run: cmdProbe},
		{Name: "agent", Args: "[flags]", Summary: "run the MQTT daemon", Run: cmdAgent},
		{Name: "info", Args: "[flags]", Summary: "print this device's system info", Run: cmdInfo},
	}}
}

func main() { program().Main() }
