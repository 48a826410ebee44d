package config

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ByteSize is a count of bytes; in text it may carry a suffix: k, KB, KiB,
// M, MB, MiB, G, GB, GiB (k, M and G are powers of 1024, as KiB).
type ByteSize int64

// ParseByteSize parses "1048576", "64MiB", "1.5G" or "512k".
func ParseByteSize(s string) (ByteSize, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' && r != '-' && r != '+' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = strings.TrimSpace(t[:i]), strings.TrimSpace(t[i:])
	}
	mult, ok := map[string]float64{
		"": 1, "b": 1, "B": 1,
		"k": 1 << 10, "K": 1 << 10, "KiB": 1 << 10, "KB": 1e3, "kB": 1e3,
		"M": 1 << 20, "MiB": 1 << 20, "MB": 1e6,
		"G": 1 << 30, "GiB": 1 << 30, "GB": 1e9,
	}[unit]
	if !ok || num == "" {
		return 0, fmt.Errorf("cannot parse %q as a byte size (e.g. 1048576, 64MiB)", s)
	}
	if !strings.Contains(num, ".") {
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("cannot parse %q as a byte size (e.g. 1048576, 64MiB)", s)
		}
		return ByteSize(n * int64(mult)), nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f*mult > 1<<62 || f*mult < -(1<<62) {
		return 0, fmt.Errorf("cannot parse %q as a byte size (e.g. 1048576, 64MiB)", s)
	}
	return ByteSize(f * mult), nil
}

// String returns the size in the largest binary unit that divides it.
func (b ByteSize) String() string {
	for _, u := range []struct {
		n    ByteSize
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if b != 0 && b%u.n == 0 {
			return strconv.FormatInt(int64(b/u.n), 10) + u.name
		}
	}
	return strconv.FormatInt(int64(b), 10)
}

// UnmarshalYAML reads a byte size from a YAML scalar.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: want a byte size, got a %s", n.Line, kindName(n.Kind))}}
	}
	v, err := ParseByteSize(n.Value)
	if err != nil {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %v", n.Line, err)}}
	}
	*b = v
	return nil
}

// MarshalYAML writes the size as String does.
func (b ByteSize) MarshalYAML() (any, error) { return b.String(), nil }
