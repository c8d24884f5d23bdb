// Package configjob judges a ConfigUpdateJob's updateFields against the
// node's configuration file before anything on the host changes: each
// field is resolved and typed as `join --set` does it, the edit is made on
// the file's YAML tree (so the operator's comments stay), and the result
// must pass every rule a node start applies on this host (config.LoadBytes,
// and the directories protect refuses to restrict). The driver of
// internal/upgrade then puts the result in place and takes it back when
// the node does not come back.
package configjob

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"unicode"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/redact"
	"github.com/kubeedge-windows/edgecore/internal/jobpolicy"
	"github.com/kubeedge-windows/edgecore/internal/protect"
)

// field is where every refusal points: the job's own spec.
const field = "spec.updateFields"

// Node is what a plan is judged against: the host's rules, the layout of
// its directories and the binary the service runs.
type Node struct {
	Host       config.Host
	Executable string
	// Policy is the node's cloud-job policy: which fields beyond the
	// tunables a job may change (jobpolicy).
	Policy jobpolicy.Policy
}

// Plan is a configuration change that passed every check.
type Plan struct {
	// Text is the new content of the configuration file.
	Text []byte
	// Changes lists the fields set, path=value, secrets redacted, in the
	// order of their paths.
	Changes []string
}

// Make applies fields (keadm's `config-update --set` keys and values, as
// upstream's runner passes them) to current, the file's content, and
// judges the result for n. Nothing is written. A field that is not a
// tunable (jobpolicy) is refused unless the node's policy names it, and a
// value naming another host's share unless the policy lets the field take
// one. The error names each refused field with its value and the fix,
// and never a secret's value nor the credentials of a URL (redact).
func Make(current []byte, fields map[string]string, n Node, secrets ...string) (*Plan, error) {
	for k, v := range fields {
		if jp, err := jsonPath(strings.TrimSpace(k)); err == nil && jobpolicy.IsSecret(jp) {
			secrets = append(secrets, keadmValue(v))
		}
	}
	p, err := makePlan(current, fields, n)
	if err != nil {
		return nil, errors.New(redact.String(err.Error(), secrets...))
	}
	for i := range p.Changes {
		p.Changes[i] = redact.String(p.Changes[i], secrets...)
	}
	return p, nil
}

func makePlan(current []byte, fields map[string]string, n Node) (*Plan, error) {
	if len(fields) == 0 {
		return nil, fmt.Errorf("%s is empty: name at least one field of the edgecore configuration, for example modules.edged.tailoredKubeletConfig.maxPods: \"50\"", field)
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var args, changes, refused []string
	// changes repeats args for the log and the report.
	for _, k := range keys {
		path, value := strings.TrimSpace(k), keadmValue(fields[k])
		jp, err := jsonPath(path)
		if err != nil {
			refused = append(refused, fmt.Sprintf("%s[%q]: %v", field, k, err))
			continue
		}
		shown := value
		if jobpolicy.IsSecret(jp) {
			shown = redact.Secret
		}
		if why, fix := n.Policy.Refusal(jp, value); why != "" {
			if _, known := jobpolicy.Classify(jp); !known {
				if _, errs := config.ParseSettings([]string{jp + "=" + value}); len(errs) > 0 {
					// No field at all: that mistake is named
					// below, with its fix.
					args = append(args, jp+"="+value)
					continue
				}
			}
			refused = append(refused, fmt.Sprintf("%s[%q] = %s: refused: %s; fix: %s", field, k, shown, why, fix))
			continue
		}
		args = append(args, jp+"="+value)
		changes = append(changes, jp+"="+shown)
	}
	settings, errs := config.ParseSettings(args)
	for _, e := range errs {
		refused = append(refused, fmt.Sprintf("%s: %v: %s", field, e.BadValue, e.Detail))
	}
	if len(refused) > 0 {
		return nil, fmt.Errorf("the ConfigUpdateJob is refused; nothing on the node changed:\n  - %s", strings.Join(refused, "\n  - "))
	}
	edits := make([]config.Edit, 0, len(settings))
	for _, s := range settings {
		edits = append(edits, s.Edit())
	}
	text, err := config.SetValues(current, edits)
	if err != nil {
		return nil, fmt.Errorf("the ConfigUpdateJob is refused; nothing on the node changed: the configuration file cannot take %s: %v", field, err)
	}
	c, _, err := config.LoadBytes(text, "the configuration with "+field+" applied", n.Host)
	if err != nil {
		return nil, fmt.Errorf("the ConfigUpdateJob is refused; nothing on the node changed: %w", err)
	}
	if _, err := protect.Targets(c, config.NewLayout(n.Host), n.Executable); err != nil {
		return nil, fmt.Errorf("the ConfigUpdateJob is refused; nothing on the node changed: %w", err)
	}
	return &Plan{Text: text, Changes: changes}, nil
}

// keadmValue turns keadm's value syntax into the YAML join --set reads:
// {a,b} is a list and {k:v,...} a map; a value in paired quotes is the
// text inside them.
func keadmValue(v string) string {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "{") && strings.HasSuffix(v, "}") {
		inner := v[1 : len(v)-1]
		parts := strings.Split(inner, ",")
		if strings.Contains(inner, ":") {
			for i, p := range parts {
				k, val, _ := strings.Cut(p, ":")
				parts[i] = strings.TrimSpace(k) + ": " + strings.TrimSpace(val)
			}
			return "{" + strings.Join(parts, ", ") + "}"
		}
		for i, p := range parts {
			parts[i] = strings.TrimSpace(p)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}

// jsonPath turns a key keadm takes into the path of the field's YAML keys:
// keadm takes the Go names of the fields as well (Modules.Edged.MaxPods).
// keadm's index syntax (clusterDNS[0]) is refused: a Windows node sets a
// list whole.
func jsonPath(key string) (string, error) {
	if key == "" {
		return "", errors.New("an empty key: name a field of the edgecore configuration")
	}
	if i := strings.IndexAny(key, "[]"); i >= 0 {
		return "", fmt.Errorf("%s names a list item; fix: set the whole list, for example %s: \"{a,b}\"", key, key[:strings.Index(key+"[", "[")])
	}
	t := reflect.TypeOf(v1alpha2.EdgeCoreConfig{})
	parts := strings.Split(key, ".")
	for i, p := range parts {
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t == nil || t.Kind() != reflect.Struct {
			t = nil
			continue
		}
		if f, ok := t.FieldByName(p); ok && p != "" && unicode.IsUpper(rune(p[0])) {
			if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
				parts[i] = name
			}
			t = f.Type
			continue
		}
		t = jsonFieldType(t, p)
	}
	return strings.Join(parts, "."), nil
}

// jsonFieldType is the type of the struct field whose YAML key is name,
// nil when there is none (join's check then names the mistake).
func jsonFieldType(t reflect.Type, name string) reflect.Type {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if n, _, _ := strings.Cut(f.Tag.Get("json"), ","); n == name {
			return f.Type
		}
		if f.Anonymous {
			if ft := f.Type; ft.Kind() == reflect.Struct {
				if got := jsonFieldType(ft, name); got != nil {
					return got
				}
			}
		}
	}
	return nil
}
