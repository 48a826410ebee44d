//go:build !linux

package loadgen

import (
	"context"
	"errors"
)

// Run performs one load test. The engine uses epoll: it runs on Linux only.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if _, _, err := cfg.withDefaults(); err != nil {
		return nil, err
	}
	return nil, errors.New("load generator: only Linux is supported")
}
