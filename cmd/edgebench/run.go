package main

import "context"

func cmdRun(ctx context.Context, env *cliEnv, args []string) error { return usagef("not built yet") }
