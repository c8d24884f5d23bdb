package containerd

import (
	"fmt"
	"strings"
)

// BundledConfig is what the config.toml join writes for the containerd the
// release bundles says.
type BundledConfig struct {
	// CNI are the directories of the CNI plugins and network
	// configurations: config.Layout's, where cni-config writes.
	CNI Dirs
	// SandboxImage is the node's pause image
	// (modules.edged.podSandboxImage), pinned so that containerd's
	// garbage collector keeps it.
	SandboxImage string
	// Root and State are containerd's root (image content, snapshots)
	// and state folders, written when set: join names the folders it
	// created with the node's descriptor, so that the file says which
	// folders containerd runs from.
	Root, State string
	// Registry, when set, points the CRI at the hosts.toml folder of a
	// --registry-config and carries its credentials.
	Registry *Registry
}

// Generate writes a config.toml in containerd 2.x's format (version 3)
// that sets only what the node needs: the CNI directories (bin_dirs, which
// the bundled 2.1 reads) and the sandbox image; everything else keeps
// containerd's defaults, so that the file stays short enough to read. A
// value a TOML literal string cannot hold (a quote or a control character)
// is refused, naming the field.
func Generate(c BundledConfig) ([]byte, error) {
	for _, v := range []struct{ field, value string }{
		{"CNI plugin directory", c.CNI.BinDir},
		{"CNI configuration directory", c.CNI.ConfDir},
		{"sandbox image", c.SandboxImage},
		{"root folder", c.Root},
		{"state folder", c.State},
	} {
		if v.value == "" && (v.field == "root folder" || v.field == "state folder") {
			continue
		}
		if v.value == "" {
			return nil, fmt.Errorf("containerd configuration: the %s is empty", v.field)
		}
		if strings.ContainsAny(v.value, "'\r\n\t") {
			return nil, fmt.Errorf("containerd configuration: the %s %q holds a quote or a control character, which config.toml cannot take as written; choose another", v.field, v.value)
		}
	}
	var b strings.Builder
	b.WriteString("# containerd's configuration, written by `edgecore.exe join` for the containerd\n")
	b.WriteString("# it installed from the release. Unset keys keep containerd's defaults\n")
	b.WriteString("# (`containerd.exe config default` lists them).\n")
	fmt.Fprintf(&b, "version = %d\n", Version2x)
	if c.Root != "" {
		fmt.Fprintf(&b, "root = '%s'\n", c.Root)
	}
	if c.State != "" {
		fmt.Fprintf(&b, "state = '%s'\n", c.State)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "[%s]\n", TablePath([]string{"plugins", "io.containerd.cri.v1.images", "pinned_images"}))
	fmt.Fprintf(&b, "  sandbox = '%s'\n\n", c.SandboxImage)
	fmt.Fprintf(&b, "[%s]\n", TablePath(cniTable(Version2x)))
	fmt.Fprintf(&b, "  %s = ['%s']\n", KeyBinDirs, c.CNI.BinDir)
	fmt.Fprintf(&b, "  %s = '%s'\n", KeyConfDir, c.CNI.ConfDir)
	if err := writeRegistry(&b, c.Registry); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}
