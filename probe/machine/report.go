package machine

// Report is what a recording returns: the samples (bounded), the summary of
// the measured window and warnings about it.
type Report struct {
	Interval float64  `json:"interval"`         // seconds between samples
	Stride   int      `json:"stride,omitempty"` // > 1: Samples keeps every stride-th sample of a long run
	Samples  []Sample `json:"samples"`
	Summary  Summary  `json:"summary"`
	Warnings []string `json:"warnings,omitempty"`
}
