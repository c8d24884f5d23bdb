package node

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	netutil "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/klog/v2"

	"github.com/kubeedge/api/apis/common/constants"
	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
	"github.com/kubeedge/beehive/pkg/core"
	"github.com/kubeedge/kubeedge/edge/cmd/edgecore/app/options"
	"github.com/kubeedge/kubeedge/edge/pkg/edgehub/certificate"
	"github.com/kubeedge/kubeedge/pkg/features"
	upstreamversion "github.com/kubeedge/kubeedge/pkg/version"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/redact"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/diskspace"
	"github.com/kubeedge-windows/edgecore/internal/envcheck"
	"github.com/kubeedge-windows/edgecore/internal/images"
	"github.com/kubeedge-windows/edgecore/internal/memlimit"
	"github.com/kubeedge-windows/edgecore/internal/modules"
	"github.com/kubeedge-windows/edgecore/internal/version"
	"github.com/kubeedge-windows/edgecore/windows/proc"
)

// Wiring is what Run connects the loaded configuration to: the handler of
// a module's panic, the upgrade agent, the upstream modules on beehive's
// bus, and the watch of the configuration file. HostWiring is the node's;
// a test passes recording fakes and sees what Run wired.
type Wiring struct {
	// PanicHandler installs what a module that panics in Start does
	// (core.SetPanicHandler).
	PanicHandler func(h func(module string, value any, stack []byte))
	// UpgradeAgent makes the agent of upgrades and cloud jobs for the
	// node's lifetime ctx (modules.NewUpgradeAgent).
	UpgradeAgent func(ctx context.Context, d *deps.Dependencies, cfg *v1alpha2.EdgeCoreConfig, configFile string) Agent
	// Services prepares Services at the node when the configuration
	// turns them on (modules.RegisterServices): before Register, since
	// it gives the kubelet the pods' DNS server.
	Services func(cfg *v1alpha2.EdgeCoreConfig, d *deps.Dependencies)
	// Register registers the upstream modules, with the agent's
	// executors in place of upstream's, and the hub's hooks recording
	// the connection's state in statusFile ("" for nowhere)
	// (modules.Register).
	Register func(cfg *v1alpha2.EdgeCoreConfig, goos string, a Agent, statusFile string)
	// WatchConfig waits in the background for the node certificates, then
	// blanks the join token in configFile (removeTokenOnceCertified).
	WatchConfig func(configFile string, create func(string) (*os.File, error))
	// RunBus runs the registered modules until ctx ends
	// (core.RunContext).
	RunBus func(ctx context.Context)
}

// Agent is the upgrade agent as Run uses it (*modules.UpgradeAgent).
type Agent interface {
	// Watch finishes an upgrade left in progress, in the background.
	Watch(ctx context.Context)
}

// HostWiring is the node's wiring: upstream's modules on beehive's bus.
func HostWiring() Wiring {
	return Wiring{
		PanicHandler: func(h func(string, any, []byte)) { core.SetPanicHandler(h) },
		UpgradeAgent: func(ctx context.Context, d *deps.Dependencies, cfg *v1alpha2.EdgeCoreConfig, configFile string) Agent {
			return modules.NewUpgradeAgent(ctx, d, cfg, configFile)
		},
		Services: modules.RegisterServices,
		Register: func(cfg *v1alpha2.EdgeCoreConfig, goos string, a Agent, statusFile string) {
			modules.Register(cfg, goos, a.(*modules.UpgradeAgent), statusFile)
		},
		WatchConfig: func(configFile string, create func(string) (*os.File, error)) {
			go removeTokenOnceCertified(configFile, create)
		},
		RunBus: func(ctx context.Context) {
			if features.DefaultFeatureGate.Enabled(features.ModuleRestart) {
				core.EnableModuleRestart()
			}
			core.RunContext(ctx)
		},
	}
}

// Run loads the configuration, prepares d's host and runs the edge
// modules, wired by w, until ctx ends.
func Run(ctx context.Context, opts Options, d *deps.Dependencies, w Wiring) error {
	host := d.Host
	// Before any module can start: a module's panic ends the node
	// through klog's exit hook.
	w.PanicHandler(modulePanicked)
	cfg, rewrites, err := config.Load(opts.ConfigFile, host)
	if err != nil {
		return err
	}
	for _, r := range rewrites {
		klog.InfoS("Rewrote config value into its Windows form", "field", r.Field, "from", redact.URL(r.From), "to", redact.URL(r.To))
	}
	// As early as possible: start-up makes the heap's first peak.
	if err := configureMemory(opts.ConfigFile, opts.MemoryLimit, cfg); err != nil {
		return err
	}
	cfg, err = publishToUpstream(opts.ConfigFile, cfg)
	if err != nil {
		return err
	}

	if cfg.Modules.EdgeHub.Token != "" {
		w.WatchConfig(opts.ConfigFile, d.ACLs.CreateFile)
	}
	if err := readBootstrapToken(cfg); err != nil {
		return err
	}
	if token := cfg.Modules.EdgeHub.Token; token != "" {
		w.PanicHandler(func(module string, value any, stack []byte) { panicked(module, value, stack, token) })
	}
	// KubeEdge's gates: the configuration's featureGates less the switches
	// our loader owns (config.GateServices).
	if err := features.DefaultMutableFeatureGate.SetFromMap(config.UpstreamFeatureGates(cfg.FeatureGates)); err != nil {
		return fmt.Errorf("config file %s: featureGates: %w", opts.ConfigFile, err)
	}
	klog.InfoS("Starting edgecore", "version", version.Get().Version, "kubeedge", upstreamversion.Get().GitVersion,
		"commit", version.Get().GitCommit, "config", opts.ConfigFile)

	// Before any module starts: edgehub writes the node's key and
	// certificates, edged Secrets, the upgrade agent acts on the journal.
	exe, _ := d.ExecutablePath()
	if err := prepareFiles(cfg, d.Layout, opts.ConfigFile, exe, opts.asService, d.ACLs); err != nil {
		return err
	}
	// Once its folders exist: a folder filling up is said once, with
	// what to do, for as long as the node runs.
	watchDiskSpace(ctx, host.GOOS, cfg, opts.logFile, d.Probes.FreeDisk, opts.diskAlert)
	// Upstream skips the check when the metaserver is on: then a kubelet
	// may legitimately talk to edgecore on the same host.
	skip := opts.SkipEnvironmentCheck || os.Getenv("CHECK_EDGECORE_ENVIRONMENT") == "false" ||
		cfg.Modules.MetaManager.MetaServer.Enable
	if !skip {
		if err := checkProcesses(envcheck.OSHost(d.ACLs)); err != nil {
			return err
		}
	}
	// A service that Windows would not wait for as long as its pods need
	// at a host shutdown does not start.
	shutdown := config.NodeShutdownOf(cfg, host.GOOS)
	if opts.asService {
		if err := checkPreShutdown(opts.ConfigFile, shutdown, d.Services.Query); err != nil {
			return err
		}
	}
	if iface := cfg.Modules.Edged.CustomInterfaceName; iface != "" {
		ip, err := netutil.ChooseBindAddressForInterface(iface)
		if err != nil {
			return fmt.Errorf("modules.edged.customInterfaceName: no usable address on interface %q: %w", iface, err)
		}
		cfg.Modules.Edged.NodeIP = ip.String()
		klog.InfoS("Using the address of the custom interface", "interface", iface, "nodeIP", cfg.Modules.Edged.NodeIP)
	}

	if ed := cfg.Modules.Edged; ed != nil && ed.Enable && ed.TailoredKubeletConfig != nil {
		// Only the CRI probe, taken once: the wait polls four times a
		// second and needs nothing else of the host.
		cri := d.Probes.CRI
		probe := func(ctx context.Context, endpoint string) error {
			// A runtime that accepts the connection but never answers
			// counts as not there yet.
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			_, err := cri(ctx, endpoint)
			return err
		}
		if err := waitForRuntime(ctx, ed.TailoredKubeletConfig.ContainerRuntimeEndpoint, probe, runtimePollInterval, runtimeLogInterval); err != nil {
			klog.InfoS("Stopped before the container runtime answered", "reason", err)
			return nil
		}
		endpoint := ed.TailoredKubeletConfig.ContainerRuntimeEndpoint
		importImages(ctx, images.HostImporter(d, endpoint, images.Snapshotter(host.GOOS)), images.Dirs(d.Layout, exe))
	}
	// Before the database is opened (Register): its tables cannot be
	// made on a full volume.
	if err := waitForDatabaseRoom(ctx, host.GOOS, cfg, d.Probes.FreeDisk, diskspace.Interval); err != nil {
		klog.InfoS("Stopped while waiting for space for the node's database", "reason", err)
		return nil
	}
	// Before edged is created: the kubelet's node shutdown manager
	// registers with the service once it runs.
	installNodeShutdown(shutdown)
	upgrades := w.UpgradeAgent(ctx, d, cfg, opts.ConfigFile)
	w.Services(cfg, d)
	w.Register(cfg, host.GOOS, upgrades, opts.hubStatus)
	// An upgrade that restarted the service into this process (or was cut
	// short by a power loss) is finished or rolled back from here.
	upgrades.Watch(ctx)
	w.RunBus(ctx)
	closeDatabase(cfg.DataBase)
	klog.Info("edgecore stopped")
	return nil
}

// configureMemory sets the Go runtime's soft memory limit (see
// internal/memlimit), from kubeReserved when the kubelet has one.
func configureMemory(path string, flag memlimit.Setting, cfg *v1alpha2.EdgeCoreConfig) error {
	var reserved map[string]string
	if m := cfg.Modules; m != nil && m.Edged != nil && m.Edged.TailoredKubeletConfig != nil {
		reserved = m.Edged.TailoredKubeletConfig.KubeReserved
	}
	p, err := memlimit.Configure(flag, reserved)
	if err != nil {
		return fmt.Errorf("config file %s: modules.edged.tailoredKubeletConfig: %w", path, err)
	}
	klog.InfoS("Go memory policy", "policy", p.String())
	return nil
}

// publishToUpstream makes the loaded configuration the one upstream packages
// read through options.GetEdgeCoreConfig (node upgrade, backup, image
// pre-pull, the metaserver), and returns that shared instance.
func publishToUpstream(path string, cfg *v1alpha2.EdgeCoreConfig) (*v1alpha2.EdgeCoreConfig, error) {
	opts := options.NewEdgeCoreOptions()
	opts.ConfigFile = path
	shared, err := opts.Config()
	if err != nil {
		return nil, err
	}
	*shared = *cfg
	return shared, nil
}

// removeTokenOnceCertified blanks the token in the config file when edgehub
// signals that the node certificates have been issued with it, writing
// the file anew with create (protect.Host.CreateFile: SYSTEM and
// Administrators only from its first byte).
func removeTokenOnceCertified(path string, create func(string) (*os.File, error)) {
	<-certificate.CleanupTokenChan
	if err := config.RemoveToken(path, create); err != nil {
		klog.ErrorS(err, "The join token could not be removed from the config file; remove modules.edgeHub.token by hand", "config", path)
		return
	}
	klog.InfoS("Node certificates issued; removed the join token from the config file", "config", path)
}

// readBootstrapToken takes the token from upstream's bootstrap file when
// keadm left one, as upstream edgecore does.
func readBootstrapToken(cfg *v1alpha2.EdgeCoreConfig) error {
	data, err := os.ReadFile(constants.BootstrapFile)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read bootstrap token file %s: %w", constants.BootstrapFile, err)
	}
	cfg.Modules.EdgeHub.Token = strings.TrimSpace(string(data))
	return nil
}

func checkProcesses(h envcheck.Host) error {
	list, err := proc.List()
	if err != nil {
		// Listing processes needs rights a restricted account may lack;
		// the check is a safety net, not a reason to refuse to start. What
		// was listed before the error is still checked.
		klog.Warningf("Cannot list processes to check for a running kubelet: %v", err)
	}
	// A program of that name someone else may have put there does not
	// stop the node; it is named, for the operator to look at.
	_, ignored := envcheck.Judge(runtime.GOOS, list, h)
	for _, p := range ignored {
		klog.InfoS("A process named like a kubelet or kube-proxy runs, but is not an installed one; starting anyway", "process", p.String())
	}
	return envcheck.CheckProcesses(runtime.GOOS, list, h)
}
