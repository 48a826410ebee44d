package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/edgebench/edgebench/collector/client"
	"github.com/edgebench/edgebench/collector/escape"
	"github.com/edgebench/edgebench/internal/cli"
)

// cmdCancel asks the running collector to cancel a command on the
// devices running it.
func cmdCancel(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet("cancel", "edgebench-collector cancel CMD_ID [flags] (CMD_ID: as trigger printed it)", env.Stderr)
	server := fs.String("server", defaultServer, "the running collector's web address")
	tokenFile := fs.String("api-token-file", "", "file holding the collector API's token (or EDGEBENCH_API_TOKEN)")
	rest, err := fs.Parse(args)
	if err != nil {
		return err
	}
	if len(rest) != 1 || rest[0] == "" {
		return cli.Usagef("want one command id: edgebench-collector cancel CMD_ID")
	}
	token, err := apiToken(*tokenFile, env.Getenv)
	if err != nil {
		return err
	}
	return cancelCommand(ctx, env.Stdout, *server, token, rest[0])
}

// cancelCommand posts the cancel of command id to the collector at
// server and says where it went.
func cancelCommand(ctx context.Context, w io.Writer, server, token, id string) error {
	t, err := client.New(server, token).Cancel(ctx, id)
	if err != nil {
		return fmt.Errorf("cancel %s: %w", escape.Printable(id), err)
	}
	to := strings.Join(t.Devices, ", ")
	if to == "" {
		to = strings.Join(t.Topics, ", ")
	}
	fmt.Fprintf(w, "cancel of %s sent to %s (command %s)\n", escape.Printable(id), to, t.CommandID)
	return nil
}
