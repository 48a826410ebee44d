package config

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/edgebench/edgebench/internal/cli"
)

// This file walks a configuration struct to its leaves, the keys, and
// sets a leaf from the text of a variable or a flag.

// field is one settable leaf of Config.
type field struct {
	key  string
	help string
	v    reflect.Value // addressable
}

func (f field) envName() string { return EnvName(f.key) }

func (f field) flagName() string { return FlagName(f.key) }

// configFields lists the leaves of c, a pointer to a struct, by key, in
// declaration order.
func configFields(c any) []field {
	var out []field
	var walk func(v reflect.Value, prefix string)
	walk = func(v reflect.Value, prefix string) {
		t := v.Type()
		for i := range t.NumField() {
			sf := t.Field(i)
			name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
			if name == "" || name == "-" {
				continue
			}
			key := name
			if prefix != "" {
				key = prefix + "." + name
			}
			fv := v.Field(i)
			if sf.Type.Kind() == reflect.Struct {
				walk(fv, key)
				continue
			}
			out = append(out, field{key: key, help: sf.Tag.Get("help"), v: fv})
		}
	}
	walk(reflect.ValueOf(c).Elem(), "")
	return out
}

var durationType = reflect.TypeFor[time.Duration]()

var byteSizeType = reflect.TypeFor[ByteSize]()

// setField parses raw into v. For lists and maps, replace says whether raw
// replaces the value or adds to it.
func setField(v reflect.Value, raw string, replace bool) error {
	switch {
	case v.Type() == durationType:
		d, err := cli.ParseDuration(raw)
		if err != nil {
			return fmt.Errorf("cannot parse %q as a duration (e.g. 30s, 5m, or 30 for seconds)", raw)
		}
		v.SetInt(int64(d))
	case v.Type() == byteSizeType:
		b, err := ParseByteSize(raw)
		if err != nil {
			return err
		}
		v.SetInt(int64(b))
	case v.Kind() == reflect.String:
		v.SetString(raw)
	case v.Kind() == reflect.Int || v.Kind() == reflect.Int64:
		n, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
		if err != nil {
			return fmt.Errorf("cannot parse %q as an integer", raw)
		}
		v.SetInt(n)
	case v.Kind() == reflect.Float64:
		f, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
		if err != nil {
			return fmt.Errorf("cannot parse %q as a number", raw)
		}
		v.SetFloat(f)
	case v.Kind() == reflect.Pointer && v.Type().Elem().Kind() == reflect.Bool:
		b, err := strconv.ParseBool(strings.TrimSpace(raw))
		if err != nil {
			return fmt.Errorf("cannot parse %q as true or false", raw)
		}
		v.Set(reflect.ValueOf(&b))
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.String:
		var list []string
		if !replace {
			list = v.Interface().([]string)
		}
		for _, s := range strings.Split(raw, ",") {
			if s = strings.TrimSpace(s); s != "" {
				list = append(list, s)
			}
		}
		v.Set(reflect.ValueOf(slices.Clip(list)))
	case v.Kind() == reflect.Map:
		m := map[string]string{}
		if !replace {
			maps := v.Interface().(map[string]string)
			for k, x := range maps {
				m[k] = x
			}
		}
		for _, kv := range strings.Split(raw, ",") {
			if kv = strings.TrimSpace(kv); kv == "" {
				continue
			}
			k, x, ok := strings.Cut(kv, "=")
			if !ok || strings.TrimSpace(k) == "" {
				return fmt.Errorf("%q is not key=value", kv)
			}
			m[strings.TrimSpace(k)] = strings.TrimSpace(x)
		}
		v.Set(reflect.ValueOf(m))
	default:
		return fmt.Errorf("unsupported field type %s", v.Type())
	}
	return nil
}

func typeWord(v reflect.Value) string {
	switch {
	case v.Type() == durationType:
		return "duration"
	case v.Type() == byteSizeType:
		return "size"
	case v.Kind() == reflect.Pointer:
		return "bool"
	case v.Kind() == reflect.Slice:
		return "list"
	case v.Kind() == reflect.Map:
		return "k=v,..."
	case v.Kind() == reflect.Float64:
		return "float"
	case v.Kind() == reflect.Int || v.Kind() == reflect.Int64:
		return "int"
	}
	return "string"
}

func valueText(v reflect.Value) string {
	switch {
	case v.Type() == durationType:
		if v.Int() == 0 {
			return ""
		}
		return time.Duration(v.Int()).String()
	case v.Type() == byteSizeType:
		return ByteSize(v.Int()).String()
	case v.Kind() == reflect.Slice:
		return strings.Join(v.Interface().([]string), ",")
	case v.Kind() == reflect.Map, v.Kind() == reflect.Pointer:
		return ""
	case v.Kind() == reflect.Int || v.Kind() == reflect.Int64:
		if v.Int() == 0 {
			return ""
		}
		return strconv.FormatInt(v.Int(), 10)
	case v.Kind() == reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	}
	return v.String()
}
