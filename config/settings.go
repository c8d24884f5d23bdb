package config

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	yamlv3 "gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config/redact"
)

// Setting is one --set path=value: a field of the configuration named by
// its YAML keys joined with dots, as `edgecore.exe --defaultconfig` prints
// them, e.g. modules.edged.tailoredKubeletConfig.maxPods=50.
type Setting struct {
	Path  string
	Value string
	keys  []string
	// value is Value decoded for the field: the text itself for a string
	// field, otherwise the YAML value it spells (50, true, [a, b]).
	value interface{}
}

// Edit is the setting as an edit of the configuration file's YAML tree.
func (s Setting) Edit() Edit { return Edit{Keys: s.keys, Value: s.value} }

// FlagSet is the flag every setting error names.
const FlagSet = "--set"

// reserved are fields join sets itself from its own flags, which check
// them and which join relies on; a --set would bypass both.
var reserved = map[string]string{
	"modules.edgeHub.token":          "give the token with --token",
	"modules.edged.hostnameOverride": "give the node name with --edgenode-name",
	"modules.edgeHub.enable":         "join needs edgehub to get the node certificates, so it stays enabled",
}

// secrets are the fields whose value an error must not repeat.
var secrets = []string{"modules.edgeHub.token"}

// isSecret matches without regard to case, so that a mistyped
// modules.edgehub.Token, refused as an unknown field, is not quoted
// either.
func isSecret(path string) bool {
	for _, s := range secrets {
		if strings.EqualFold(path, s) {
			return true
		}
	}
	return false
}

// ParseSettings checks each path=value against the fields of the edgecore
// configuration and decodes its value for that field. Unknown paths and
// values of the wrong kind are refused, each naming the setting.
func ParseSettings(args []string) ([]Setting, field.ErrorList) {
	root := reflect.TypeOf(v1alpha2.EdgeCoreConfig{})
	var out []Setting
	var errs field.ErrorList
	bad := func(arg, format string, a ...interface{}) {
		errs = append(errs, field.Invalid(field.NewPath(FlagSet), arg, fmt.Sprintf(format, a...)))
	}
	for _, arg := range args {
		path, value, ok := strings.Cut(arg, "=")
		path = strings.TrimSpace(path)
		if !ok || path == "" {
			bad(arg, "expected path=value, for example %s modules.edged.tailoredKubeletConfig.maxPods=50", FlagSet)
			continue
		}
		if isSecret(path) {
			// Every error below quotes the setting, and errors are
			// printed, logged and pasted into tickets, where the token
			// would still be valid.
			arg = path + "=" + redact.Secret
		}
		if advice, ok := reserved[path]; ok {
			bad(arg, "%s: %s", path, advice)
			continue
		}
		keys := strings.Split(path, ".")
		leaf, err := resolve(root, keys)
		if err != nil {
			bad(arg, "%v", err)
			continue
		}
		v, err := decodeFor(leaf, value)
		if err != nil {
			bad(arg, "%s: %v", path, err)
			continue
		}
		out = append(out, Setting{Path: path, Value: value, keys: keys, value: v})
	}
	return out, errs
}

// resolve follows keys through the configuration's Go type by the JSON
// names its fields have in the file, and returns the type of the field the
// last key names. A map accepts any key. Sections (structs) are not values:
// their fields are set one by one.
func resolve(t reflect.Type, keys []string) (reflect.Type, error) {
	for i, key := range keys {
		t = deref(t)
		where := "the configuration"
		if i > 0 {
			where = strings.Join(keys[:i], ".")
		}
		switch {
		case key == "":
			return nil, fmt.Errorf("empty key after %s: remove the doubled or trailing dot", where)
		case t.Kind() == reflect.Map:
			// Any key: node labels, feature gates, eviction thresholds.
			t = t.Elem()
		case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
			return nil, fmt.Errorf("%s is a list and is set whole (%s %s=[a, b]), not by index", where, FlagSet, where)
		case isValue(t):
			return nil, fmt.Errorf("%s is a value, not a section; it has no field %q", where, key)
		default:
			f, ok := fieldByJSONName(t, key)
			if !ok {
				return nil, unknownField(t, where, key)
			}
			t = f
		}
	}
	if t := deref(t); t.Kind() == reflect.Struct && !isValue(t) {
		return nil, fmt.Errorf("this is a section, not a value: set its fields one by one, for example %s.%s=...",
			strings.Join(keys, "."), firstField(t))
	}
	return t, nil
}

// SettableField is one value of the configuration a setting (join's
// --set, a ConfigUpdateJob's updateFields) may name, by its YAML keys
// joined with dots.
type SettableField struct {
	Path string
	// Map is set for a mapping (node labels, feature gates, eviction
	// thresholds): a setting names it whole or one of its entries
	// (Path.key).
	Map bool
}

// SettableFields lists every value of the configuration, in the order of
// their paths, as resolve reaches them: sections are walked into, and
// every other field, mappings and lists included, is one value.
func SettableFields() []SettableField {
	var out []SettableField
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		t = deref(t)
		if t.Kind() == reflect.Struct && !isValue(t) {
			for name, ft := range jsonFields(t) {
				p := name
				if prefix != "" {
					p = prefix + "." + name
				}
				walk(ft, p)
			}
			return
		}
		out = append(out, SettableField{Path: prefix, Map: t.Kind() == reflect.Map})
	}
	walk(reflect.TypeOf(v1alpha2.EdgeCoreConfig{}), "")
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// isValue tells leaf types: everything but structs, and structs such as
// metav1.Duration that decode themselves from a single value ("10s").
func isValue(t reflect.Type) bool {
	return t.Kind() != reflect.Struct || reflect.PointerTo(t).Implements(jsonUnmarshaler)
}

// jsonFields lists a struct's fields by their names in the file, with the
// fields of embedded structs (metav1.TypeMeta) lifted as encoding/json
// lifts them.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && name == "" && deref(f.Type).Kind() == reflect.Struct {
			for k, v := range jsonFields(deref(f.Type)) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func fieldByJSONName(t reflect.Type, key string) (reflect.Type, bool) {
	f, ok := jsonFields(t)[key]
	return f, ok
}

// unknownField names the section and the key, and suggests the field the
// key was probably meant to be: same letters in another case (maxpods for
// maxPods), or the only field starting with it.
func unknownField(t reflect.Type, where, key string) error {
	fields := jsonFields(t)
	var names []string
	for name := range fields {
		names = append(names, name)
	}
	sort.Strings(names)
	var prefixed []string
	for _, name := range names {
		if strings.EqualFold(name, key) {
			return fmt.Errorf("%s has no field %q; did you mean %q?", where, key, name)
		}
		if strings.HasPrefix(strings.ToLower(name), strings.ToLower(key)) {
			prefixed = append(prefixed, name)
		}
	}
	if len(prefixed) == 1 {
		return fmt.Errorf("%s has no field %q; did you mean %q?", where, key, prefixed[0])
	}
	if len(names) <= 12 {
		return fmt.Errorf("%s has no field %q; its fields are %s", where, key, strings.Join(names, ", "))
	}
	return fmt.Errorf("%s has no field %q; `%s --defaultconfig` lists every field", where, key, ExecutableName(Windows))
}

func firstField(t reflect.Type) string {
	var names []string
	for name := range jsonFields(t) {
		names = append(names, name)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "field"
	}
	return names[0]
}

// decodeFor turns the text after "=" into the value for a field of type t
// and checks that the field takes it, the way the config file would be
// decoded. A string field takes the text as it is, so that a node name such
// as "0123" or a value "true" stays a string.
func decodeFor(t reflect.Type, text string) (interface{}, error) {
	var v interface{}
	if deref(t).Kind() == reflect.String {
		v = text
	} else if err := yamlv3.Unmarshal([]byte(text), &v); err != nil {
		return nil, fmt.Errorf("not a YAML value: %v", err)
	}
	if v == nil {
		return nil, fmt.Errorf("empty value: give a value (the default is in `%s --defaultconfig`)", ExecutableName(Windows))
	}
	js, err := json.Marshal(v)
	if err != nil {
		// A YAML mapping with non-string keys, for example.
		return nil, fmt.Errorf("not a value this field takes: %v", err)
	}
	probe := reflect.New(t)
	if err := json.Unmarshal(js, probe.Interface()); err != nil {
		if deref(t).Kind() == reflect.Struct {
			// A type that parses its own text: its error says why
			// ("time: invalid duration").
			return nil, fmt.Errorf("%q is not %s: %v", text, KindName(t), err)
		}
		return nil, fmt.Errorf("%q is not %s", text, KindName(t))
	}
	return v, nil
}

// ApplySettings returns c with the settings applied, decoded on top of the
// defaults for host exactly as edgecore will read the file. c is not
// changed.
func ApplySettings(c *v1alpha2.EdgeCoreConfig, settings []Setting, host Host) (*v1alpha2.EdgeCoreConfig, error) {
	if len(settings) == 0 {
		return c, nil
	}
	text, err := yaml.Marshal(c)
	if err != nil {
		return nil, err
	}
	var doc map[string]interface{}
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return nil, err
	}
	for _, s := range settings {
		m := doc
		for _, key := range s.keys[:len(s.keys)-1] {
			next, ok := m[key].(map[string]interface{})
			if !ok {
				// A section the generated configuration leaves out.
				next = map[string]interface{}{}
				m[key] = next
			}
			m = next
		}
		m[s.keys[len(s.keys)-1]] = s.value
	}
	text, err = yaml.Marshal(doc)
	if err != nil {
		return nil, err
	}
	out, err := Parse(text, host)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", FlagSet, err)
	}
	return out, nil
}

// SplitSettings splits each --set value at the commas that separate
// settings, as keadm's --set does (key1=val1,key2=val2), but not at commas
// inside brackets, braces or quotes, so that a list value such as
// clusterDNS=[10.96.0.10, 10.96.0.11] stays whole.
func SplitSettings(values []string) []string {
	var out []string
	for _, v := range values {
		depth, start := 0, 0
		var quote rune
		for i, r := range v {
			switch {
			case quote != 0:
				if r == quote {
					quote = 0
				}
			case r == '"' || r == '\'':
				quote = r
			case r == '[' || r == '{':
				depth++
			case (r == ']' || r == '}') && depth > 0:
				depth--
			case r == ',' && depth == 0:
				out = append(out, v[start:i])
				start = i + 1
			}
		}
		out = append(out, v[start:])
	}
	return out
}
