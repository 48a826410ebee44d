package report

import (
	"math"
	"strconv"
	"time"
)

// JSON is the --format json view of a LoadResult: one flat object with
// the figures scripts want, latency in microseconds.
type JSON struct {
	URL         string    `json:"url"`
	Method      string    `json:"method"`
	Protocol    string    `json:"protocol,omitempty"` // HTTP/1.1, HTTP/1.0, h2 or h2c
	Connections int       `json:"connections"`
	Threads     int       `json:"threads"`
	Loops       int       `json:"event_loops,omitempty"`
	KeepAlive   bool      `json:"keepalive"`
	Rate        float64   `json:"rate,omitempty"`
	LengthCheck bool      `json:"length_check"`
	Start       time.Time `json:"start"`
	DurationS   float64   `json:"duration_s"` // the measured window, without warm-up or drain
	Completed   int64     `json:"completed"`
	OK          int64     `json:"ok"`
	RPS         float64   `json:"rps"`
	Bytes       int64     `json:"bytes"`
	BodyBytes   int64     `json:"body_bytes"`
	Connects    int64     `json:"connects"`
	// SentBytes are the request bytes written; KeepAliveResponses the
	// responses after which the server kept the connection open (ab's
	// "Total body sent" and "Keep-Alive requests").
	SentBytes          int64            `json:"sent_bytes"`
	KeepAliveResponses int64            `json:"keepalive_responses"`
	DocLength          int64            `json:"doc_length"`
	Server             string           `json:"server"`
	Interrupted        bool             `json:"interrupted,omitempty"`
	Errors             Errors           `json:"errors"`
	StatusCodes        map[string]int64 `json:"status_codes"`
	// Latency, Connect, Waiting and Percentiles are null without a
	// request to back them (LoadResult.NoLatency says why, in
	// no_latency).
	Latency     *LatencyJSON     `json:"latency_us"`
	Connect     *LatencyJSON     `json:"connect_us"` // per connection opened (Connects), as the text's connect line
	Waiting     *LatencyJSON     `json:"ttfb_us"`
	Percentiles map[string]int64 `json:"percentiles_us"`
	NoLatency   string           `json:"no_latency,omitempty"`
	Timeline    []Second         `json:"timeline"`
	// TLS is what the handshakes negotiated, with the handshake's time
	// (part of connect_us); H2 what the HTTP/2 connections saw.
	TLS *TLSJSON `json:"tls,omitempty"`
	H2  *H2Info  `json:"h2,omitempty"`
	// Drained holds the requests in flight at the end of the window, in no
	// figure above but bytes and body_bytes, which count what they read
	// before it; the warm-up's requests are in none.
	Drained        Drained `json:"drained"`
	WarmupS        float64 `json:"warmup_s,omitempty"`
	WarmupRequests int64   `json:"warmup_requests,omitempty"`
}

// TLSJSON is the JSON view of a LoadResult's TLS figures.
type TLSJSON struct {
	TLSInfo
	Handshake *LatencyJSON `json:"handshake_us"` // null without a handshake
}

// LatencyJSON summarises one histogram.
type LatencyJSON struct {
	Min    int64   `json:"min"`
	Mean   float64 `json:"mean"`
	StdDev float64 `json:"stdev"`
	Max    int64   `json:"max"`
	P50    int64   `json:"p50"`
	P90    int64   `json:"p90"`
	P99    int64   `json:"p99"`
	P999   int64   `json:"p999"`
}

// latencyJSON is h's summary, nil when h holds no value.
func latencyJSON(h *Histogram) *LatencyJSON {
	if h == nil || h.Count() == 0 {
		return nil
	}
	return &LatencyJSON{
		Min: h.Min(), Mean: round2(h.Mean()), StdDev: round2(h.StdDev()), Max: h.Max(),
		P50: h.Quantile(.50), P90: h.Quantile(.90), P99: h.Quantile(.99), P999: h.Quantile(.999),
	}
}

func round2(v float64) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', 2, 64), 64)
	return f
}

// JSON returns the JSON view of r.
func (r *LoadResult) JSON() JSON {
	j := JSON{
		URL: r.Target.URL, Method: r.Method, Connections: r.Connections, Threads: r.Threads, Loops: r.Loops,
		KeepAlive: r.KeepAlive, Rate: r.Rate, LengthCheck: r.LengthCheck, Start: r.Start.UTC(), DurationS: math.Round(r.Duration.Seconds()*1000) / 1000,
		Completed: r.Completed, OK: r.OK, RPS: round2(r.RPS()), Bytes: r.Bytes, BodyBytes: r.BodyBytes,
		Connects: r.Connects, SentBytes: r.Sent, KeepAliveResponses: r.KeepAliveResponses, DocLength: r.DocLength, Server: r.Server, Interrupted: r.Interrupted,
		Errors: r.Errors, StatusCodes: map[string]int64{},
		Latency: latencyJSON(r.Latency), Connect: latencyJSON(connectsOf(r)), Waiting: latencyJSON(r.Waiting),
		Timeline: r.Timeline, NoLatency: r.NoLatency(),
		Drained: r.Drained, WarmupS: r.Warmup.Seconds(), WarmupRequests: r.WarmupRequests,
	}
	if j.Drained.StatusCodes == nil {
		j.Drained.StatusCodes = map[int]int64{}
	}
	j.Protocol, j.H2 = r.Protocol, r.H2
	if r.TLS != nil {
		j.TLS = &TLSJSON{TLSInfo: *r.TLS, Handshake: latencyJSON(r.Handshake)}
	}
	for code, n := range r.StatusCodes {
		j.StatusCodes[strconv.Itoa(code)] = n
	}
	if j.NoLatency == "" {
		j.Percentiles = map[string]int64{}
		for _, p := range Percentiles {
			j.Percentiles[strconv.FormatFloat(p, 'f', -1, 64)] = r.Latency.Quantile(p / 100)
		}
	}
	if j.Timeline == nil {
		j.Timeline = []Second{}
	}
	return j
}
