package cni

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Severity of a finding about an existing config file.
type Severity string

const (
	// SeverityError: containerd or the plugin will fail, or pods will be
	// unreachable or unable to resolve names.
	SeverityError Severity = "error"
	// SeverityWarning: it works in some setups only.
	SeverityWarning Severity = "warning"
)

// Finding is one problem in a CNI config file, with a one-line fix.
type Finding struct {
	Severity Severity
	// Field is the JSON path of the offending value, e.g. "ipam.routes[0].gw";
	// empty when the problem is the file as a whole.
	Field   string
	Problem string
	Fix     string
}

func (f Finding) String() string {
	if f.Field == "" {
		return fmt.Sprintf("%s: %s; %s", f.Severity, f.Problem, f.Fix)
	}
	return fmt.Sprintf("%s: %s %s; %s", f.Severity, f.Field, f.Problem, f.Fix)
}

const regenerate = "or rewrite the file with edgecore.exe cni-config"

// fileConf is what Validate reads. Go's JSON decoding matches keys without
// regard to case, as the plugin's own does, so "GW" and "Nameservers" in
// containerd's and other samples are read here as the plugin reads them.
type fileConf struct {
	CNIVersion   *string                    `json:"cniVersion"`
	Name         string                     `json:"name"`
	Plugins      []json.RawMessage          `json:"plugins"`
	Type         string                     `json:"type"`
	IPAM         fileIPAM                   `json:"ipam"`
	DNS          dns                        `json:"dns"`
	Capabilities map[string]json.RawMessage `json:"capabilities"`
	// AdditionalArgs is where sdnbridge and nat read HNS policies,
	// Policies where win-bridge does.
	AdditionalArgs []json.RawMessage `json:"AdditionalArgs"`
	Policies       []json.RawMessage `json:"policies"`
}

type fileIPAM struct {
	Subnet  string `json:"subnet"`
	Gateway string `json:"gateway"`
	Routes  []struct {
		GW string `json:"gw"`
	} `json:"routes"`
}

// ValidateOptions are the edgecore settings that decide whether a config's
// DNS works.
type ValidateOptions struct {
	// ClusterDNS is modules.edged.tailoredKubeletConfig.clusterDNS.
	ClusterDNS []string
}

// Validate checks the content of an existing CNI config file (.conf or
// .conflist) the way containerd and the Windows plugins will read it.
func Validate(data []byte, o ValidateOptions) []Finding {
	if f, bad := checkEncoding(data); bad {
		return []Finding{f}
	}
	var top fileConf
	if f, bad := decode(data, &top, ""); bad {
		return []Finding{f}
	}
	var out []Finding
	if strings.TrimSpace(top.Name) == "" {
		out = append(out, errorf("name", "is missing; containerd refuses a network without a name", "add \"name\": \"nat\", "+regenerate))
	}
	if len(top.Plugins) == 0 {
		return append(out, checkPlugin(top, "", top.CNIVersion, o, true)...)
	}
	for i, raw := range top.Plugins {
		prefix := fmt.Sprintf("plugins[%d].", i)
		var p fileConf
		if f, bad := decode(raw, &p, prefix); bad {
			out = append(out, f)
			continue
		}
		// Only the first plugin sets up the network; chained ones such as
		// portmap carry no DNS.
		out = append(out, checkPlugin(p, prefix, top.CNIVersion, o, i == 0)...)
	}
	return dedupe(out) // a conflist's cniVersion is reported once, not per plugin
}

func dedupe(fs []Finding) []Finding {
	var out []Finding
	seen := map[Finding]bool{}
	for _, f := range fs {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// checkEncoding catches files PowerShell wrote: Windows PowerShell 5.1's ">"
// and Out-File write UTF-16, and "-Encoding utf8" adds a byte-order mark.
// Go's JSON decoder, and so containerd, reads neither.
func checkEncoding(data []byte) (Finding, bool) {
	fix := "save it without a byte-order mark (Set-Content -Encoding ascii), " + regenerate
	switch {
	case len(bytes.TrimSpace(data)) == 0:
		return errorf("", "the file is empty", "write the network config into it, "+regenerate), true
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}), bytes.HasPrefix(data, []byte{0xFE, 0xFF}), bytes.IndexByte(data, 0) >= 0:
		return errorf("", "the file is UTF-16, which containerd cannot parse", fix), true
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		return errorf("", "the file starts with a UTF-8 byte-order mark, which containerd cannot parse", fix), true
	}
	return Finding{}, false
}

// decode reports a syntax error with its line and column, and a value of
// the wrong type with its field.
func decode(data []byte, v *fileConf, prefix string) (Finding, bool) {
	err := json.Unmarshal(data, v)
	if err == nil {
		return Finding{}, false
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		line, col := position(data, syn.Offset)
		return errorf("", fmt.Sprintf("the file is not valid JSON: %v at line %d, column %d", syn, line, col),
			"correct the JSON there, "+regenerate), true
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		if typ.Field == "" && prefix == "" {
			return errorf("", "the file is a JSON "+typ.Value+", not an object", "write the network config as a JSON object, "+regenerate), true
		}
		if typ.Field == "" {
			return errorf(strings.TrimSuffix(prefix, "."), "is a JSON "+typ.Value+", not an object", "write each plugin as a JSON object"), true
		}
		return errorf(prefix+typ.Field, "is a JSON "+typ.Value+" where "+jsonKind(typ.Type)+" is expected", "correct its type, "+regenerate), true
	}
	return errorf("", "the file is not valid JSON: "+err.Error(), "correct the JSON, "+regenerate), true
}

// jsonKind names a Go type the way the file's author thinks of it.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "a " + t.Kind().String()
}

func position(data []byte, offset int64) (line, col int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:offset]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = int(offset) - bytes.LastIndexByte(before, '\n') - 1
	return line, col
}

func errorf(field, problem, fix string) Finding {
	return Finding{Severity: SeverityError, Field: field, Problem: problem, Fix: fix}
}

func warnf(field, problem, fix string) Finding {
	return Finding{Severity: SeverityWarning, Field: field, Problem: problem, Fix: fix}
}

// PodDNS reads what the CNI configuration data gives pods as their DNS
// servers: its first plugin's dns.nameservers, and whether it relays the
// runtime's (the kubelet's clusterDNS) instead, through
// capabilities.dns. Validate says what is wrong with a file PodDNS
// cannot read.
func PodDNS(data []byte) (nameservers []string, relaysRuntime bool, err error) {
	var top fileConf
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, false, err
	}
	p := top
	if len(top.Plugins) > 0 {
		// Only the first plugin sets up the network (see Validate).
		p = fileConf{}
		if err := json.Unmarshal(top.Plugins[0], &p); err != nil {
			return nil, false, err
		}
	}
	if raw, ok := p.Capabilities["dns"]; ok {
		if err := json.Unmarshal(raw, &relaysRuntime); err != nil {
			return nil, false, fmt.Errorf("capabilities.dns is %s where true or false is expected", raw)
		}
	}
	return p.DNS.Nameservers, relaysRuntime, nil
}
