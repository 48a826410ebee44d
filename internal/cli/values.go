package cli

import (
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

const (
	durationWord = "a duration such as 30s, 500ms or 2m (a bare number is seconds)"
	wantDuration = "want " + durationWord
)

// ParseDuration parses a duration as every flag of edgebench takes it:
// "30s", "500ms", "2m", "1h30m", or a bare number of seconds ("30",
// "0.5"), as wrk's -d30 and ab's -t30 are. It may not be negative.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		if !(n >= 0 && n <= float64(1<<63-1)/float64(time.Second)) { // NaN too
			return 0, errors.New("want a duration of 0 or more")
		}
		return time.Duration(n * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return 0, errors.New(wantDuration)
	case d < 0:
		return 0, errors.New("want a duration of 0 or more")
	}
	return d, nil
}

// Duration is a time.Duration flag value read by ParseDuration.
type Duration time.Duration

// Set implements pflag.Value.
func (d *Duration) Set(s string) error {
	v, err := ParseDuration(s)
	if err == nil {
		*d = Duration(v)
	}
	return err
}

// String implements pflag.Value: "0" for zero, which the usage leaves
// out, and "10m" or "1h" rather than "10m0s" or "1h0m0s".
func (d *Duration) String() string {
	if *d == 0 {
		return "0"
	}
	s := time.Duration(*d).String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// Type implements pflag.Value.
func (d *Duration) Type() string { return "duration" }

// Pairs is a repeatable k=v flag value: labels, selectors.
type Pairs map[string]string

// Set implements pflag.Value: it adds one k=v.
func (p Pairs) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return errors.New("want k=v")
	}
	p[k] = v
	return nil
}

// String implements pflag.Value.
func (p Pairs) String() string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(p)) {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k + "=" + p[k])
	}
	return b.String()
}

// Type implements pflag.Value.
func (p Pairs) Type() string { return "k=v" }

// refused is the value of a flag given only to be refused: see Refuse.
type refused string

func (r refused) Set(string) error { return refusal(r) }
func (r refused) String() string   { return "" }
func (r refused) Type() string     { return "refused" }

// refusal is the error of a refused flag: why it is refused.
type refusal string

func (r refusal) Error() string { return string(r) }
