// Package core registers modules, starts them on the bus and shuts them down.
package core

import (
	"sync"

	"k8s.io/klog/v2"

	"github.com/kubeedge/beehive/pkg/common"
)

// Module is what every KubeEdge component implements to run on the bus.
type Module interface {
	Name() string
	Group() string
	Start()
	Enable() bool
	// RestartPolicy says whether and how the bus starts the module again
	// when Start returns; nil runs Start once.
	RestartPolicy() *ModuleRestartPolicy
}

// ModuleInfo is a registered module with the context type it asked for.
type ModuleInfo struct {
	contextType string
	module      Module
}

// GetModule returns the registered module.
func (mi *ModuleInfo) GetModule() Module { return mi.module }

// The registry. registryMu serialises Register and the bus's own reads
// (snapshot, disabled); it cannot cover callers of GetModules, which get the
// map itself, as upstream's callers expect.
var (
	registryMu      sync.Mutex
	modules         = map[string]*ModuleInfo{}
	disabledModules = map[string]*ModuleInfo{}
)

// Register keeps an enabled module for start-up and remembers a disabled one
// apart; the optional argument names the context type (only "channel").
func Register(m Module, opts ...string) {
	info := &ModuleInfo{contextType: common.MsgCtxTypeChannel, module: m}
	if len(opts) > 0 && opts[0] != "" {
		info.contextType = opts[0]
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if m.Enable() {
		modules[m.Name()] = info
		klog.Infof("Module %s registered successfully", m.Name())
		return
	}
	disabledModules[m.Name()] = info
	klog.Warningf("Module %s is disabled, do not register", m.Name())
}

// GetModules returns the live registry of enabled modules by name, not a
// copy: upstream's callers take the map and look in it after a later
// Register (upstream's metamanager test does exactly that). Like upstream's,
// it must not be read while another goroutine registers; modules register
// during start-up, before StartModules.
func GetModules() map[string]*ModuleInfo {
	return modules
}

// snapshot copies the registry under the lock, so that StartModules and
// shutdown never iterate the live map while a late Register writes it.
func snapshot() map[string]*ModuleInfo {
	registryMu.Lock()
	defer registryMu.Unlock()
	out := make(map[string]*ModuleInfo, len(modules))
	for name, info := range modules {
		out[name] = info
	}
	return out
}

// disabled returns the names of modules registered while disabled.
func disabled() []string {
	registryMu.Lock()
	defer registryMu.Unlock()
	out := make([]string, 0, len(disabledModules))
	for name := range disabledModules {
		out = append(out, name)
	}
	return out
}
