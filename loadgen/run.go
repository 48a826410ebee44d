package loadgen

import "time"

// Progress is a snapshot of a running test.
type Progress struct {
	Elapsed   time.Duration // since the measured window began (negative in warm-up)
	Completed int64
	Errors    int64
	Warmup    bool
}

// DialError is the error of a run that could not open a single connection
// (refused, unreachable, timed out): there is nothing to report but that.
type DialError struct {
	Addr string // host:port of the URL, and the address dialled if it differs
	Err  error  // the connect error, e.g. syscall.ECONNREFUSED
}

func (e *DialError) Error() string { return e.Err.Error() + ": " + e.Addr }

// Unwrap returns the connect error.
func (e *DialError) Unwrap() error { return e.Err }
