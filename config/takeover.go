package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
	yamlv3 "gopkg.in/yaml.v3"
)

// Adoption is a configuration upstream's keadm wrote, as this build takes
// it over: the file with only what this build needs changed, the
// configuration it loads as, and the changes.
type Adoption struct {
	// Data is the file to write: the original text with only the Changes
	// made (comments, order and every other value kept).
	Data []byte
	// Config is Data as edgecore loads it (defaults, Normalize,
	// validation).
	Config *v1alpha2.EdgeCoreConfig
	// Changes are the values changed in the file; Rewrites those that
	// Normalize changes each time the file is loaded, which need no edit.
	Changes  []Rewrite
	Rewrites []Rewrite
}

// Adopt takes over the configuration raw that upstream's keadm wrote for
// a Windows node (v1.21 to v1.23), for host. Only what this build refuses
// is changed in the file:
//
//   - modules.edged.windowsService: keadm v1.23 writes true, which makes
//     upstream's embedded kubelet register with the service manager as
//     the service (kubelet's initForOS); here edgecore is the service and
//     Validate refuses it.
//   - modules.edgeHub.token: keadm writes the join token into the file
//     and upstream's edgecore blanks it once the certificates are issued
//     (cleanupToken); a join that never got there leaves it. It is
//     blanked, as join does once the certificates exist (RemoveToken),
//     or, when newToken is given, set to it: a node whose certificate and
//     key are moved aside applies for new ones with it at its first start
//     (takeover --token).
//
// Everything else of upstream's defaults loads as it is (upstream's
// Windows pause image too: see LinuxOnlySandboxImage). The result must
// load as edgecore will load it: every other problem is returned with the
// field and the fix, for the operator to correct in the file.
func Adopt(raw []byte, host Host, newToken string) (*Adoption, error) {
	text, err := DecodeText(raw)
	if err != nil {
		return nil, err
	}
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(text, &doc); err != nil {
		return nil, err
	}
	if lookup(&doc, "modules") == nil {
		return nil, errors.New("the file has no modules section: it is not an edgecore configuration")
	}
	a := &Adoption{}
	// The values are replaced in the text where the parser found them,
	// rather than the document encoded again: that would re-indent every
	// list of a file keadm wrote.
	lines := strings.Split(string(text), "\n")
	// set writes value in place of n's and records the change as from
	// and to, which show a token redacted.
	set := func(n *yamlv3.Node, field, from, to, value string) error {
		if n.Kind != yamlv3.ScalarNode || n.Line < 1 || n.Line > len(lines) || n.Column < 1 || n.Column > len(lines[n.Line-1])+1 ||
			n.Style&(yamlv3.LiteralStyle|yamlv3.FoldedStyle) != 0 {
			return fmt.Errorf("%s: write the value on one line after the key, as keadm does, then run the command again", field)
		}
		line := lines[n.Line-1]
		rest := line[n.Column-1:]
		comment := ""
		if i := strings.Index(rest, " #"); i >= 0 && n.Style&(yamlv3.DoubleQuotedStyle|yamlv3.SingleQuotedStyle) == 0 {
			comment = rest[i:]
		}
		lines[n.Line-1] = line[:n.Column-1] + value + comment
		a.Changes = append(a.Changes, Rewrite{Field: field, From: from, To: to})
		return nil
	}
	if n := lookup(&doc, "modules", "edged", "windowsService"); n != nil && n.Value != "false" {
		if err := set(n, "modules.edged.windowsService", n.Value, "false", "false"); err != nil {
			return nil, err
		}
	}
	n := lookup(&doc, "modules", "edgeHub", "token")
	switch {
	case newToken != "" && n == nil:
		return nil, errors.New(`the file has no modules.edgeHub.token to put the new token in: add token: "" under modules.edgeHub, then run the command again`)
	case newToken != "":
		from := `""`
		if n.Value != "" {
			from = redactToken(n.Value)
		}
		if err := set(n, "modules.edgeHub.token", from, redactToken(newToken), newToken); err != nil {
			return nil, err
		}
	case n != nil && n.Value != "":
		if err := set(n, "modules.edgeHub.token", redactToken(n.Value), `""`, `""`); err != nil {
			return nil, err
		}
	}
	a.Data = []byte(strings.Join(lines, "\n"))
	if a.Config, a.Rewrites, err = LoadBytes(a.Data, "the configuration as taken over", host); err != nil {
		return nil, err
	}
	if a.Config.Modules.Edged == nil || a.Config.Modules.Edged.HostnameOverride == "" {
		return nil, fmt.Errorf("the file names no modules.edged.hostnameOverride: the node's name cannot be kept; add the name the node has in the cluster (kubectl get nodes)")
	}
	return a, nil
}
