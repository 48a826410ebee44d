// Package cli is the command line of edgebench's binaries: a Program of
// Subcommands, each parsing its FlagSet, and the exit statuses: 0 done (or
// help asked for), 1 failed, 2 a usage mistake, told in one line.
//
// A FlagSet (spf13/pflag underneath) takes flags as people type them for
// ab, wrk and GNU tools: -c500 and -c 500, --timeout=2s and -timeout 2s,
// -k=false, the URL anywhere. Every duration flag takes 30s, 2m or a bare
// number of seconds. A mistake is a UsageError naming the flag and what
// it wants, or the known flag that was meant.
//
//	fs := cli.NewFlagSet("run", "edgebench run [flags] URL", env.Stderr)
//	fs.IntVarP(&c.Connections, "connections", "c", 10, "connections")
//	fs.DurationVarP(&c.Duration, "duration", "d", 0, "duration")
//	rest, err := fs.Parse(args) // rest: the URL
package cli
