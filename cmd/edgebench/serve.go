package main

import (
	"context"
	"fmt"
	"net"
	"os"

	"github.com/edgebench/edgebench/internal/cli"
	"github.com/edgebench/edgebench/target"
)

func cmdServe(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet("serve", "edgebench serve [--addr 127.0.0.1:8080] [--dir DIR]", env.Stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address (loopback by default)")
	dir := fs.String("dir", "", "serve static files from this folder")
	if err := fs.ParseNoArgs(args); err != nil {
		return err
	}
	if _, _, err := net.SplitHostPort(*addr); err != nil {
		return cli.Usagef("--addr %q: %v", *addr, err)
	}
	var files *os.Root
	if *dir != "" {
		if st, err := os.Stat(*dir); err != nil || !st.IsDir() {
			return cli.Usagef("--dir %q: not a folder", *dir)
		}
		var err error
		if files, err = target.OpenDir(*dir); err != nil {
			return err
		}
	}
	srv, err := target.Start(*addr, "edgebench/"+version, files)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "edgebench serve: listening on http://%s/\n", srv.Addr())
	<-ctx.Done()
	return srv.Close()
}
