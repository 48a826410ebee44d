package main

import (
	"context"
	"flag"
	"os"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/edgebench/edgebench/agent"
)

// cmdAgent runs the daemon: configuration from the file, EDGEBENCH_*
// variables and flags, in that order of precedence.
func cmdAgent(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet("agent", "edgebench agent [--config /etc/edgebench/agent.yaml] [flags]", env.stderr)
	path := fs.String("config", "/etc/edgebench/agent.yaml", "configuration file (absent: defaults)")
	probeRoot := fs.String("probe-root", "/", "read /proc and /sys below this folder")
	cf := agent.BindConfigFlags(fs.FlagSet)
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if _, err := os.Stat(*path); os.IsNotExist(err) && !isFlagSet(fs, "config") {
		*path = "" // the default file is optional; a named one is not
	}
	cfg, err := agent.LoadConfigWithFlags(*path, env.getenv, cf)
	if err != nil {
		return usagef("%v", err)
	}
	log, err := newLogger(env, cfg.LogLevel)
	if err != nil {
		return usagef("log_level: %v", err)
	}
	defer log.Sync()
	return agent.Serve(ctx, cfg, agent.Options{Version: version, Log: log, ProbeRoot: *probeRoot}, env.getenv)
}

func isFlagSet(fs *flagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// newLogger logs to stderr for journald, which adds its own timestamps:
// level, logger and message, then fields, without a time.
func newLogger(env *cliEnv, level string) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, err
	}
	enc := zap.NewProductionEncoderConfig()
	enc.TimeKey = ""
	enc.EncodeLevel = zapcore.LowercaseLevelEncoder
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.AddSync(env.stderr), lvl)
	return zap.New(core), nil
}
