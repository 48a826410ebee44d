// Package config layers a configuration as edgebench's commands read it:
// a YAML file, then EDGEBENCH_* environment variables, then command-line
// flags, each overriding the one before. A configuration is a struct, its
// defaults filled in, whose yaml tags name its keys: a nested struct's
// keys are dotted ("policy.max_connections"). The environment variable of
// a key is EnvName(key) (EDGEBENCH_POLICY_MAX_CONNECTIONS) and its flag
// FlagName(key) (-policy-max-connections); lists and maps are comma
// separated there ("127.0.0.0/8,::1", "server=nginx,build=gcc-9.3"), and an
// empty variable is taken as unset. Each field may carry a help tag: the
// usage of its flag.
//
// Load's errors are one line naming the source and the key: "agent.yaml
// line 3: unknown field \"brokr\"", "EDGEBENCH_HEARTBEAT_INTERVAL:
// heartbeat_interval: cannot parse ...", "flag -queue-size: ...".
// Validation is the caller's; its *FieldError names the key, and Sources
// says where the key's value came from.
package config

import (
	"fmt"
	"os"
	"strings"
)

// Sources says where the value of each key came from: "agent.yaml line
// 7", "EDGEBENCH_FLEET" or "flag -fleet"; keys left at their default are
// absent.
type Sources map[string]string

// Where is the source of key's value, or def when it has its default.
func (s Sources) Where(key, def string) string {
	if w, ok := s[key]; ok {
		return w
	}
	return def
}

// Load decodes the YAML file at path over c, a pointer to a struct holding
// the defaults (no file when path is ""), then applies the EDGEBENCH_*
// variables getenv returns, then flags (nil: none), and says where each
// key's value came from. Unknown keys in the file are refused.
func Load(c any, path string, getenv func(string) string, flags *Flags) (Sources, error) {
	src := Sources{} // key -> where its value came from
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read config: %w", err)
		}
		if err := decodeYAML(path, data, c, src); err != nil {
			return nil, err
		}
	}
	fields := configFields(c)
	if getenv != nil {
		for _, f := range fields {
			name := f.envName()
			raw := getenv(name)
			if raw == "" {
				continue
			}
			if err := setField(f.v, raw, true); err != nil {
				return nil, fmt.Errorf("%s: %s: %v", name, f.key, err)
			}
			src[f.key] = name
		}
	}
	if flags != nil {
		byKey := map[string]field{}
		for _, f := range fields {
			byKey[f.key] = f
		}
		fresh := map[string]bool{}
		for _, fv := range flags.set {
			f := byKey[fv.key]
			if err := setField(f.v, fv.raw, !fresh[fv.key]); err != nil {
				return nil, fmt.Errorf("flag -%s: %v", f.flagName(), err)
			}
			fresh[fv.key] = true
			src[f.key] = "flag -" + f.flagName()
		}
	}
	return src, nil
}

// Key is one key of a configuration and its help.
type Key struct{ Name, Help string }

// Keys lists the keys of the configuration c points to, in declaration
// order.
func Keys(c any) []Key {
	var out []Key
	for _, f := range configFields(c) {
		out = append(out, Key{Name: f.key, Help: f.help})
	}
	return out
}

// EnvPrefix starts the name of every environment variable edgebench reads.
const EnvPrefix = "EDGEBENCH_"

// EnvName is the environment variable of a key: EDGEBENCH_ and the key in
// upper case with dots as underscores ("policy.max_connections" is
// EDGEBENCH_POLICY_MAX_CONNECTIONS). Every EDGEBENCH_* name is spelled by
// it.
func EnvName(key string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// FlagName is the flag of a key: the key with dots and underscores as
// dashes ("policy.max_connections" is -policy-max-connections).
func FlagName(key string) string {
	return strings.NewReplacer(".", "-", "_", "-").Replace(key)
}

// FieldError is a bad value of one config field.
type FieldError struct {
	Field string // the key, e.g. "policy.max_connections"
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }
