package main

import (
	"context"
	"flag"
	"os"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/edgebench/edgebench/agent"
	"github.com/edgebench/edgebench/internal/cli"
)

// cmdAgent runs the daemon: configuration from the file, EDGEBENCH_*
// variables and flags, in that order of precedence.
func cmdAgent(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet("agent", "edgebench agent [--config /etc/edgebench/agent.yaml] [flags]", env.Stderr)
	path := fs.String("config", "/etc/edgebench/agent.yaml", "configuration file (absent: defaults)")
	probeRoot := fs.String("probe-root", "/", "read /proc and /sys below this folder")
	config := flag.NewFlagSet("agent", flag.ContinueOnError)
	cf := agent.BindConfigFlags(config)
	fs.AddGoFlagSet(config)
	if err := fs.ParseNoArgs(args); err != nil {
		return err
	}
	if _, err := os.Stat(*path); os.IsNotExist(err) && !fs.Changed("config") {
		*path = "" // the default file is optional; a named one is not
	}
	cfg, err := agent.LoadConfigWithFlags(*path, env.Getenv, cf)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	log, err := newLogger(env, cfg.LogLevel)
	if err != nil {
		return cli.Usagef("log_level: %v", err)
	}
	defer log.Sync()
	return agent.Serve(ctx, cfg, agent.Options{Version: version, Log: log, ProbeRoot: *probeRoot}, env.Getenv)
}

// newLogger logs to stderr for journald, which adds its own timestamps:
// level, logger and message, then fields, without a time.
func newLogger(env *cli.Env, level string) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, err
	}
	enc := zap.NewProductionEncoderConfig()
	enc.TimeKey = ""
	enc.EncodeLevel = zapcore.LowercaseLevelEncoder
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.AddSync(env.Stderr), lvl)
	return zap.New(core), nil
}
