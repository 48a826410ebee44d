package group

import (
	"slices"
	"sort"
	"strings"

	"github.com/edgebench/edgebench/collector/escape"
)

// systemFields are the keys of what a result says of its device that a
// comparison can be by: the device, its fleet and the fingerprint's
// system-info fields (governor is cpu_governor's short name), and the
// device that loaded a run across two devices (loader, fleet/id; "-" for
// a run of one device). The store keeps a column (or an expression) for
// each.
var systemFields = []string{"device", "fleet", "board", "cpu_model", "cores", "os", "kernel", "arch", "cpu_governor",
	"governor", "agent_version", "server", "loader"}

// SystemFields lists the system-info fields a comparison can be by, in
// order of their names.
func SystemFields() []string {
	out := slices.Clone(systemFields)
	sort.Strings(out)
	return out
}

// IsSystemField reports whether k is one of SystemFields.
func IsSystemField(k string) bool { return slices.Contains(systemFields, k) }

// Keys are the keys a comparison can be by: the system-info fields, the
// parts of the spec and the given labels (label.KEY where a label is
// named like one of the others).
func Keys(labels []string) []string {
	keys := make([]string, 0, len(systemFields)+len(specFields)+len(labels))
	keys = append(keys, SystemFields()...)
	keys = append(keys, specFields...)
	for _, l := range labels {
		if !IsSystemField(l) && !IsSpecField(l) {
			keys = append(keys, escape.Printable(l))
		} else {
			keys = append(keys, "label."+escape.Printable(l))
		}
	}
	return keys
}

// Kind is where a comparison's groups come from.
type Kind int

// The kinds of a comparison's groups.
const (
	Label         Kind = iota // a run label
	System                    // a system-info field (or the device, the fleet)
	SpecPart                  // a part of the spec
	LabelOrSystem             // the run label where a run has it, else the system-info field
)

// Resolve reads a --by key: label.KEY is the run label KEY, sys.KEY the
// system-info field or part of the spec KEY, and a bare key a part of
// the spec, a system-info field (which a run label of its name overrides
// where a run has one) or else a run label.
func Resolve(by string) (string, Kind) {
	if k, ok := strings.CutPrefix(by, "label."); ok {
		return k, Label
	}
	if k, ok := strings.CutPrefix(by, "sys."); ok {
		if IsSpecField(k) {
			return k, SpecPart
		}
		if IsSystemField(k) {
			return k, System
		}
	}
	if IsSpecField(by) {
		return by, SpecPart
	}
	if IsSystemField(by) {
		return by, LabelOrSystem
	}
	return by, Label
}

// SpecPartOf is the part of the spec a comparison by by compares, ""
// when it is by something else.
func SpecPartOf(by string) string {
	if k, kind := Resolve(by); kind == SpecPart {
		return k
	}
	return ""
}

// LabelString is labels as k=v pairs sorted by key, comma-separated.
func LabelString(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}

// ScheduleLabel is the label every result of a schedule's firing carries:
// the schedule's name. A series is not split by it.
const ScheduleLabel = "schedule"
