package jobpolicy

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
)

// File is the name of the node's cloud-job policy, in the folder of the
// node's configuration (C:\etc\kubeedge\config), which only SYSTEM and
// Administrators may change: what the node's administrators let cloud
// jobs do beyond the published defaults. The file is theirs; no command
// of edgecore writes it.
const File = "cloud-jobs.yaml"

// PathOf is where the node on layout l reads its policy. It is a fixed
// place in the node's own restricted folder, not one beside a --config
// elsewhere: the file widens what the cloud may do, so it must lie where
// nobody but administrators could have put it.
func PathOf(l config.Layout) string {
	return ospath.Join(l.GOOS, ospath.Dir(l.GOOS, l.ConfigFile), File)
}

// Policy is the node's cloud-job policy. The zero value is the default:
// tunables only, pull secrets from the node's own namespace only.
type Policy struct {
	// Path is where the node reads its policy (PathOf), whether or not
	// the file exists: refusals name it.
	Path string `json:"-"`

	ConfigUpdateJob ConfigUpdateJobPolicy `json:"configUpdateJob,omitempty"`
	ImagePrePullJob ImagePrePullJobPolicy `json:"imagePrePullJob,omitempty"`
}

// ConfigUpdateJobPolicy names the fields beyond the tunables a
// ConfigUpdateJob may change on this node.
type ConfigUpdateJobPolicy struct {
	// Fields a job may change although their class is refused by
	// default: a field by its path, a mapping whole or one of its
	// entries (featureGates.requireAuthorization).
	Fields []string `json:"fields,omitempty"`
	// UNCFields may also take a value that names another host's share
	// (\\server\share\..., //server/share, file://server/...), which
	// SYSTEM reaches as the computer's domain account. Each must be
	// in Fields or be a tunable.
	UNCFields []string `json:"uncFields,omitempty"`
}

// ImagePrePullJobPolicy widens where an ImagePrePullJob's pull secret may
// come from.
type ImagePrePullJobPolicy struct {
	// PullSecretNamespaces are namespaces besides the node's own
	// (modules.edged.registerNodeNamespace) whose secrets a job may
	// name.
	PullSecretNamespaces []string `json:"pullSecretNamespaces,omitempty"`
}

// Judge refuses a policy file that someone other than the node's
// administrators could have written (HostJudge).
type Judge func(path string) error

// Load reads the policy at path, judging the file first. A missing file
// is the default policy. Any other failure is an error: a policy that
// cannot be trusted or read is never half applied, and the caller refuses
// what depends on it, naming the file and the fix.
func Load(path string, read func(string) ([]byte, error), judge Judge) (Policy, error) {
	data, err := read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Policy{Path: path}, nil
	}
	if err != nil {
		return Policy{}, fmt.Errorf("the node's cloud-job policy %s cannot be read: %w", path, err)
	}
	if err := judge(path); err != nil {
		return Policy{}, fmt.Errorf("the node's cloud-job policy %s is not trusted, so no cloud job is taken until it is: %w", path, err)
	}
	p, err := Parse(data)
	if err != nil {
		return Policy{}, fmt.Errorf("the node's cloud-job policy %s: %w", path, err)
	}
	p.Path = path
	return p, nil
}

// Parse reads a policy's text and checks it: every key known, every field
// one the table holds and that a policy may widen, every namespace a
// namespace's name.
func Parse(data []byte) (Policy, error) {
	var p Policy
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		return Policy{}, fmt.Errorf("not a policy (keys: configUpdateJob.fields, configUpdateJob.uncFields, imagePrePullJob.pullSecretNamespaces): %v", err)
	}
	var errs []string
	check := func(key string, list []string) {
		for _, f := range list {
			c, ok := Classify(f)
			switch {
			case !ok:
				errs = append(errs, fmt.Sprintf("%s: %q is not a field of the edgecore configuration (`edgecore.exe --defaultconfig` lists them)", key, f))
			case c.Never:
				errs = append(errs, fmt.Sprintf("%s: %s can never be taken from a job: %s", key, f, c.Reason()))
			}
		}
	}
	check("configUpdateJob.fields", p.ConfigUpdateJob.Fields)
	check("configUpdateJob.uncFields", p.ConfigUpdateJob.UNCFields)
	for _, f := range p.ConfigUpdateJob.UNCFields {
		if c, ok := Classify(f); ok && c.Class != Tunable && !p.allowsField(f) {
			errs = append(errs, fmt.Sprintf("configUpdateJob.uncFields: %s is not in configUpdateJob.fields: name it there too", f))
		}
	}
	for _, ns := range p.ImagePrePullJob.PullSecretNamespaces {
		if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
			errs = append(errs, fmt.Sprintf("imagePrePullJob.pullSecretNamespaces: %q is not a namespace: %s", ns, strings.Join(msgs, "; ")))
		}
	}
	if len(errs) > 0 {
		return Policy{}, errors.New(strings.Join(errs, "; "))
	}
	return p, nil
}

// allowsField reports whether the policy's fields name path: the field
// itself, or the mapping path is an entry of, or (for a mapping named
// whole by path) every entry.
func (p Policy) allowsField(path string) bool { return names(p.ConfigUpdateJob.Fields, path) }

func (p Policy) allowsUNC(path string) bool { return names(p.ConfigUpdateJob.UNCFields, path) }

// names reports whether one of list names path, or the mapping path is
// an entry of.
func names(list []string, path string) bool {
	for _, f := range list {
		if f == path {
			return true
		}
		if c, ok := classes[f]; ok && c.Map && strings.HasPrefix(path, f+".") {
			return true
		}
	}
	return false
}

// Refusal is why a ConfigUpdateJob may not set the field at path to value
// on a node with policy p, with the fix; why is "" when it may. path is
// the field's YAML path (the table's), value the text the job gives. A
// path the table does not hold is refused (unclassified): the caller
// names the mistake first when the path is no field at all.
func (p Policy) Refusal(path, value string) (why, fix string) {
	where := p.Path
	if where == "" {
		where = File + " in the folder of the node's configuration"
	}
	c, ok := Classify(path)
	switch {
	case !ok:
		return "this release of edgecore has not classified the field, and a field nobody classified is refused",
			"remove it from the job; docs/cloud-jobs.md lists what a job may change"
	case c.Never:
		return c.Reason(), "remove it from the job"
	case c.Class != Tunable && !p.allowsField(path):
		return c.Reason(), fmt.Sprintf("remove it from the job, or, if the node's administrators want the cloud to change it, "+
			"they name %s under configUpdateJob.fields in %s", c.Path, where)
	case RemoteValue(value) && !p.allowsUNC(path):
		return "the value names another host's share: the node, which runs as SYSTEM, would authenticate to that host as the computer's account and use what it serves",
			fmt.Sprintf("give a local path, or the node's administrators name %s under configUpdateJob.uncFields in %s", c.Path, where)
	}
	return "", ""
}

// IsSecret reports whether the value of the field at path must never be
// repeated: in a refusal, a log line or a job's status.
func IsSecret(path string) bool {
	c, ok := Classify(path)
	return ok && c.Class == Secret
}

// RemoteValue reports whether a value, or a string in it (a list or a
// mapping in YAML), names another host's file share: \\server\share,
// //server/share, \\?\UNC\server\share, or a file://, smb:// or npipe://
// URL of a host other than this one. Windows opens each of them over SMB,
// as the computer's account for a service running as SYSTEM.
func RemoteValue(v string) bool {
	var doc any
	if err := yaml.Unmarshal([]byte(v), &doc); err == nil {
		if anyString(doc, isRemote) {
			return true
		}
	}
	return isRemote(strings.Trim(strings.TrimSpace(v), `"'`))
}

func anyString(v any, f func(string) bool) bool {
	switch t := v.(type) {
	case string:
		return f(t)
	case []any:
		for _, e := range t {
			if anyString(e, f) {
				return true
			}
		}
	case map[string]any:
		for k, e := range t {
			if f(k) || anyString(e, f) {
				return true
			}
		}
	}
	return false
}

func isRemote(s string) bool {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && ospath.IsSeparator(config.Windows, s[0]) && ospath.IsSeparator(config.Windows, s[1]) {
		// Clean turns \\?\UNC\server\x into \\server\x and spells
		// device paths (\\.\pipe\x, \\?\C:\x) as \\.\ or as the drive
		// path they name.
		c := ospath.Clean(config.Windows, s)
		return strings.HasPrefix(c, `\\`) && !strings.HasPrefix(c, `\\.\`)
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return false
	}
	switch strings.ToLower(scheme) {
	case "file", "smb", "npipe":
	default:
		return false
	}
	host := rest
	if i := strings.IndexAny(host, `/\`); i >= 0 {
		host = host[:i]
	}
	if at := strings.LastIndexByte(host, '@'); at >= 0 {
		host = host[at+1:]
	}
	switch strings.ToLower(host) {
	case "", ".", "localhost", "127.0.0.1", "[::1]":
		// npipe://./pipe/x and file:///C:/x are this host. A file URL
		// whose path is a share (file:////server/share) is one.
		return host == "" && strings.HasPrefix(rest, "//")
	}
	return true
}

// PullSecretAllowed refuses an ImagePrePullJob's pull secret from a
// namespace the node does not take secrets from. An ImagePrePullJob is
// cluster-scoped (operations.kubeedge.io/v1alpha2, scope Cluster): it has
// no namespace of its own, and who may create one may not read the
// secrets of every namespace. So its secret comes from the node's own
// namespace (modules.edged.registerNodeNamespace, "default" unless set),
// or from a namespace the node's administrators name in the policy;
// otherwise the node would fetch, keep in its database and send to a
// registry of the job's choosing a secret of any namespace (kube-system's
// included).
func (p Policy) PullSecretAllowed(namespace, nodeNamespace string) error {
	if nodeNamespace == "" {
		nodeNamespace = "default"
	}
	allowed := append([]string{nodeNamespace}, p.ImagePrePullJob.PullSecretNamespaces...)
	for _, ns := range allowed {
		if ns == namespace {
			return nil
		}
	}
	where := p.Path
	if where == "" {
		where = File + " in the folder of the node's configuration"
	}
	return fmt.Errorf("spec.imagePrePullTemplate.imageSecrets names a secret of namespace %q: an ImagePrePullJob is cluster-scoped, so the node takes its pull secret only from %s; "+
		"fix: put the secret in namespace %q, or the node's administrators add %q under imagePrePullJob.pullSecretNamespaces in %s",
		namespace, strings.Join(allowed, ", "), nodeNamespace, namespace, where)
}
