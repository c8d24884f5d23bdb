package runtimeinstall

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/containerd"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/config/registries"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/internal/steps"
)

// RegistryDir is the folder of hosts.toml files (config.toml's registry
// config_path) join writes for a --registry-config: inside containerd's
// folder, so that the copied CA, client key and config.toml's credentials
// are open to SYSTEM and Administrators only from their first byte.
func RegistryDir(l config.Layout) string {
	return ospath.Join(l.GOOS, l.ContainerdDir, "certs.d")
}

// registryPlan is what the --registry-config makes, nil without one.
func (in *Installer) registryPlan() *registries.Plan {
	if in.o.Registries == nil {
		return nil
	}
	p := registries.NewPlan(in.o.Registries, in.goos, RegistryDir(in.o.Layout))
	return &p
}

// registryLine says in the step's description what the registry
// configuration writes, naming hosts and files but no credential.
func (in *Installer) registryLine() string {
	p := in.registryPlan()
	if p == nil {
		return ""
	}
	var regs []string
	for _, h := range p.Hosts {
		regs = append(regs, h.Registry)
	}
	hosts := make([]string, 0, len(p.Auths))
	for h := range p.Auths {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	line := fmt.Sprintf("; write the registry configuration of %s into %s (hosts.toml for %s",
		registries.Flag, p.Root, strings.Join(regs, ", "))
	if len(p.Copies) > 0 {
		line += fmt.Sprintf(", %d certificate files copied in", len(p.Copies))
	}
	line += ")"
	if len(hosts) > 0 {
		line += ", the credentials for " + strings.Join(hosts, ", ") + " into " + in.o.Layout.ContainerdConfigFile
	}
	return line
}

// installRegistries writes the registry configuration into containerd's
// folder, recording every folder and file, and returns what config.toml
// says of it (nil without a --registry-config). The operator's
// certificate files are copied, never referred to where they lie: a file
// outside the node's folders may be changed by anyone who can write there.
func (in *Installer) installRegistries(out io.Writer) (*containerd.Registry, error) {
	p := in.registryPlan()
	if p == nil {
		return nil, nil
	}
	targets := []protect.Target{{What: "containerd's folder", Path: in.o.Layout.ContainerdDir, Restrict: true}}
	for _, d := range append([]string{p.Root}, p.Dirs...) {
		made, err := protect.Create(in.goos, targets, d, in.h.Protect)
		in.rec.Dirs = append(in.rec.Dirs, made...)
		if err != nil {
			return nil, steps.WithFix(err, "make sure no file has that name and the drive is writable, then run join again")
		}
	}
	for _, c := range p.Copies {
		if err := in.h.CopyNew(c.From, c.To); err != nil {
			return nil, steps.WithFix(fmt.Errorf("copy %s (%s): %w", c.What, c.From, err),
				"check that the file named in "+registries.Flag+" exists and is readable, then run join again")
		}
		in.rec.Files = append(in.rec.Files, c.To)
	}
	for _, h := range p.Hosts {
		if err := in.h.WriteNew(h.Path, h.Data); err != nil {
			return nil, fmt.Errorf("write %s: %w", h.Path, err)
		}
		in.rec.Files = append(in.rec.Files, h.Path)
	}
	fmt.Fprintf(out, "wrote the registry configuration into %s: %d hosts.toml, %d certificate files\n", p.Root, len(p.Hosts), len(p.Copies))
	for _, w := range p.Warnings {
		fmt.Fprintf(out, "warning: %s\n", w)
	}
	r := &containerd.Registry{ConfigPath: p.Root, Auths: map[string]containerd.RegistryAuth{}}
	for h, a := range p.Auths {
		r.Auths[h] = containerd.RegistryAuth{Username: a.Username, Password: a.Password, Auth: a.Auth, IdentityToken: a.IdentityToken}
	}
	return r, nil
}
