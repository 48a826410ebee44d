package config

import (
	"flag"
	"reflect"
	"slices"
	"sort"
)

// This file binds one flag per key of a configuration.

// Flags holds the overrides of a configuration given on the command line;
// see Bind.
type Flags struct {
	set []flagSetting
}

type flagSetting struct{ key, raw string }

// Bind defines one flag per key of the configuration defaults points to
// on fs (e.g. -broker-url, -device-id, -policy-max-connections, -labels
// k=v,k2=v2; a list or map flag given twice adds to itself), with its
// help tag as usage and its default shown, and returns the collector of
// the values given. Pass it to Load after fs.Parse.
func Bind(fs *flag.FlagSet, defaults any) *Flags {
	cf := &Flags{}
	for _, f := range configFields(defaults) {
		fs.Var(&configFlag{cf: cf, key: f.key, def: valueText(f.v), typ: typeWord(f.v), kind: f.v.Type()}, f.flagName(), f.help)
	}
	return cf
}

// Keys returns the keys set by flags, sorted.
func (cf *Flags) Keys() []string {
	var keys []string
	for _, s := range cf.set {
		keys = append(keys, s.key)
	}
	sort.Strings(keys)
	return slices.Compact(keys)
}

type configFlag struct {
	cf   *Flags
	key  string
	def  string
	typ  string       // what the usage calls the value; "bool" for a boolean
	kind reflect.Type // the field's type
}

func (f *configFlag) String() string {
	if f == nil {
		return ""
	}
	return f.def
}

func (f *configFlag) Set(s string) error {
	// Parse now so that a bad flag is reported by the flag package.
	if err := setField(reflect.New(f.kind).Elem(), s, true); err != nil {
		return err
	}
	f.cf.set = append(f.cf.set, flagSetting{key: f.key, raw: s})
	return nil
}

func (f *configFlag) IsBoolFlag() bool { return f.typ == "bool" }

// Type names the value in a usage (spf13/pflag's Value).
func (f *configFlag) Type() string { return f.typ }
