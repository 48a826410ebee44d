package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"text/tabwriter"

	"github.com/edgebench/edgebench/internal/cli"
	"github.com/edgebench/edgebench/probe"
)

func cmdInfo(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet("info", "edgebench info [--format text|json] [--root DIR]", env.Stderr)
	format := fs.String("format", "text", "text or json")
	root := fs.String("root", "/", "read proc/, sys/ and etc/ below this folder")
	if err := fs.ParseNoArgs(args); err != nil {
		return err
	}
	if *format != "text" && *format != "json" {
		return cli.Usagef("--format %q: want text or json", *format)
	}
	in, err := probe.SystemInfo(*root)
	if err != nil {
		return err
	}
	if *format == "json" {
		b, err := json.MarshalIndent(in, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(env.Stdout, "%s\n", b)
		return err
	}
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	cpu := dash(in.CPUModel) + ", " + strconv.Itoa(in.Cores) + " cores"
	if in.MaxFreqMHz > 0 {
		cpu += ", max " + strconv.Itoa(in.MaxFreqMHz) + " MHz"
	}
	arch := dash(in.Arch) + " (binary " + in.GoArch + ")"
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	for _, row := range [][2]string{
		{"board", dash(in.Board)},
		{"cpu", cpu},
		{"governor", dash(in.Governor)},
		{"memory", fmt.Sprintf("%.1f GiB", float64(in.MemoryBytes)/(1<<30))},
		{"os", dash(in.OS)},
		{"kernel", dash(in.Kernel)},
		{"arch", arch},
		{"hostname", dash(in.Hostname)},
		{"boot_id", dash(in.BootID)},
	} {
		fmt.Fprintf(tw, "%s\t%s\n", row[0], row[1])
	}
	return tw.Flush()
}
