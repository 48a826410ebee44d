package main

import "context"

func cmdServe(ctx context.Context, env *cliEnv, args []string) error { return usagef("not built yet") }
