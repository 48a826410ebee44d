// Package report holds what a load test measured and writes it as people
// read it. It has no engine: the collector rebuilds a LoadResult from what a
// device sent and prints the same reports as `edgebench run` did.
//
//   - LoadResult is one measured window: counts, errors by class, status
//     codes, bytes, the drained and warm-up requests apart, and four
//     latency histograms (Histogram: HDR, microseconds, with a compact
//     and a packed encoding for the wire and the store).
//   - Summarize gives the spread of repeated runs (Repeated, Spread).
//   - WriteText is edgebench's own report; WriteAB and WriteWrk are ab
//     2.3's and wrk 4's line for line (with WriteABCSV and WriteABGnuplot
//     for ab's -e and -g files), WriteH2load h2load 1.52's summary;
//     LoadResult.JSON is the --format json view.
//   - TLSInfo and H2Info are what HTTPS and HTTP/2 runs add: the TLS
//     version, cipher and key exchange, handshakes and resumptions; the
//     streams, GOAWAYs and resets.
//   - Target is a load test's URL, checked and split by ParseTarget;
//     Header is one of its request headers, checked by ParseHeader.
//
// The reports are pinned by golden files in testdata (go test -run Golden
// -update rewrites them after a wanted change).
package report
