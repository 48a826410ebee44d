// Package loadgen generates HTTP/1.x and HTTP/2 load, in cleartext or over
// TLS, and measures it, as wrk, ab and h2load do: Run takes a Config (URL,
// connections, duration or request count, rate, keep-alive, timeouts,
// warm-up, the dialect of ab or wrk, TLS options, HTTP/2 and its streams
// per connection) and returns a report.LoadResult: what the measured window
// saw, with latency histograms, a per-second timeline, the requests
// drained after the window and those of the warm-up apart. The LoadResult and the reports that
// print it (edgebench's, ab's, wrk's, JSON) live in loadgen/report, which
// has no engine and is what a reader of results imports.
//
//	res, err := loadgen.Run(ctx, loadgen.Config{URL: "http://127.0.0.1:8080/", Connections: 50, Duration: 30 * time.Second})
//	if err != nil { ... }                 // a bad Config (ErrConfig), not one connection (*DialError), none set up (*HandshakeError)
//	report.WriteText(os.Stdout, res)      // or WriteAB, WriteWrk, res.JSON()
//
// The engine is wrk's design, on Linux only: each worker is one epoll
// event loop over its share of the connections, with the request
// serialised once, one read buffer per loop, no goroutine per connection
// and no allocation per request (over TLS, crypto/tls's one per read of
// the socket). Its files, by job:
//
//   - config.go: Config, its defaults and checks, and the request bytes
//     of each Dialect (buildRequest, Request).
//   - run_linux.go: Run. It resolves the target, starts the workers (at
//     most one per P, wrk's threads shared among them: schedule.go's
//     layout), and watches them: progress once a second, the window's
//     edges (Config.WindowStart, WindowEnd), cancellation, a target that
//     refuses every connection.
//   - engine_linux.go: one worker's event loop and what it holds: each
//     connection's states (connecting, writing, reading, closing, waiting
//     for the open-loop schedule), epoll's events and waits. The loop's
//     jobs have a file each: dial_linux.go opens the connections (the
//     ramp that opens them as the server answers them, rampMax; a connect
//     that failed); timers_linux.go keeps its time (the window's close,
//     the waits of the open loop and of a back-off, timeouts and the
//     drain's end); request_linux.go drives a request by its
//     connection's state (HTTP/1.x written, read and parsed; its end).
//   - stats_linux.go: what a worker counts as its requests end (record,
//     recordFailure: tallies, histograms, the timeline, wrk's per-thread
//     rates, ab's per-request timings), and merge, which adds the
//     workers' statistics up into one report.LoadResult.
//   - tls.go, tls_linux.go: TLS. crypto/tls over the engine's non-blocking
//     sockets (reads that resume after a would-block, writes that keep
//     what the kernel refuses), each handshake a coroutine resumed at its
//     socket's edges; the TLS options, what a failed handshake means
//     (HandshakeError), what the handshakes negotiated (report.TLSInfo).
//   - h2.go: the HTTP/2 client codec (frames walked in place, hpack from
//     golang.org/x/net), without I/O; h2_linux.go drives it: streams
//     opened and booked as requests, GOAWAY and RST_STREAM.
//   - parser.go: the incremental HTTP/1.x response parser, fed bytes as
//     they arrive, allocation-free.
//   - sys_linux.go: raw read, write and close on the non-blocking sockets.
//
// A request belongs to the part of the run it started in: the warm-up
// (counted in WarmupRequests only), the measured window, or, for a request
// still in flight when a timed window closes, Drained. The window is never
// longer than Config.Duration, whatever the drain takes.
package loadgen
