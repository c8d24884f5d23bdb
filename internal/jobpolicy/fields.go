package jobpolicy

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kubeedge-windows/edgecore/config"
)

// What a ConfigUpdateJob may change is published: every field of the
// edgecore configuration (v1alpha2.EdgeCoreConfig, as config.SettableFields
// lists them) has one class below. Only Tunable fields are taken from a
// job; every other class is refused with its reason unless the node's
// administrators name the field in the node's policy file (Policy). A
// field that is not in the table (one a new upstream release adds) is
// refused: TestEveryFieldIsClassified fails until someone classifies it,
// and docs/cloud-jobs.md carries the table (TestDocsTableIsTheClassification).
//
// The rule behind the classes: a cloud identity that may create
// ConfigUpdateJobs is trusted with how the node's workloads run (limits,
// eviction, garbage collection, log levels, labels, timings), not with
// where the node connects, what it serves, whom it trusts, which files it
// uses as SYSTEM or which code it runs. Upstream counted a ConfigUpdateJob
// that reached code execution as a vulnerability.

// Class is what a ConfigUpdateJob may do with a field.
type Class string

// The classes, with the reason a refusal gives.
const (
	Tunable     Class = "tunable"
	Endpoint    Class = "endpoint"
	Listener    Class = "listener"
	Credentials Class = "credentials"
	Path        Class = "path"
	Module      Class = "module"
	FeatureGate Class = "feature gate"
	Protection  Class = "protection"
	Secret      Class = "secret"
	Identity    Class = "identity"
	Code        Class = "code"
	Internal    Class = "internal"
)

// why is the reason a refusal of a field of each class gives.
var why = map[Class]string{
	Tunable:     "a tunable: how the node runs its workloads",
	Endpoint:    "an endpoint: where the node connects or what it announces; a job could point the node at another cloud, container runtime or broker",
	Listener:    "a listener: what the node serves and on which address; a job could open a node API to other accounts or the network",
	Credentials: "the TLS trust of a connection (CA, certificate, key, TLS on or off, rotation); a job could make the node trust another cloud",
	Path:        "a path: a file or folder the node reads, writes or runs code from as SYSTEM; a job could make it use files another account controls, or restrict a folder of Windows",
	Module:      "switches a module on or off: what runs on the node, and what it serves, is its administrators' choice",
	FeatureGate: "feature gates change what the node's code does, security checks and alpha features included",
	Protection:  "a protection the kubelet gives pods and the host, or whom the node's APIs trust",
	Secret:      "a credential: it would travel in the job's spec and status",
	Identity:    "who the node is in the cluster, and whose secrets it may read",
	Code:        "code the node runs: the image every pod's sandbox runs",
	Internal:    "set by the node and its tools, not a setting (the file's type, the database, the modules' routing)",
}

// Why is the reason of class c.
func (c Class) Why() string { return why[c] }

// Classified is one field of the table.
type Classified struct {
	Path  string
	Class Class
	// Never is set for the fields no policy may give a job: the join
	// token (a secret in the job's spec) and the node's name (another
	// node).
	Never bool
	// Note replaces the class's reason where the field has its own.
	Note string
	// Map is set for a mapping: a job names it whole or one entry.
	Map bool
}

// Reason is why a job may not change the field.
func (c Classified) Reason() string {
	if c.Note != "" {
		return c.Note
	}
	return c.Class.Why()
}

// classes is the table, by path. The kubelet's fields are listed under
// k, edged's own under e.
var classes = func() map[string]Classified {
	const (
		k  = "modules.edged.tailoredKubeletConfig."
		e  = "modules.edged."
		h  = "modules.edgeHub."
		b  = "modules.eventBus."
		mm = "modules.metaManager."
		ms = "modules.metaManager.metaServer."
		s  = "modules.edgeStream."
	)
	byClass := map[Class][]string{
		Tunable: {
			// The hub's and the stream's pacing.
			h + "heartbeat", h + "messageBurst", h + "messageQPS", h + "projectID",
			h + "quic.handshakeTimeout", h + "quic.readDeadline", h + "quic.writeDeadline",
			h + "websocket.handshakeTimeout", h + "websocket.readDeadline", h + "websocket.writeDeadline",
			s + "handshakeTimeout", s + "readDeadline", s + "writeDeadline",
			// MQTT delivery, metadata queries, the service bus's time-out.
			b + "mqttQOS", b + "mqttRetain", b + "mqttSessionQueueSize", b + "mqttPubClientID", b + "mqttSubClientID",
			mm + "remoteQueryTimeout", "modules.serviceBus.timeout",
			// edged: labels, events, the node's own garbage collection.
			e + "nodeLabels", e + "reportEvent", e + "registerSchedulable",
			e + "experimentalNodeAllocatableIgnoreEvictionThreshold", e + "maxContainerCount",
			e + "maxPerPodContainerCount", e + "minimumGCAge", e + "windowsPriorityClass", e + "runtimeCgroups",
			// The kubelet: limits, reservations, eviction, image GC,
			// logs, timings, status reports, shutdown, pods' DNS.
			k + "maxPods", k + "podsPerCore", k + "podPidsLimit", k + "maxOpenFiles",
			k + "kubeReserved", k + "systemReserved", k + "reservedSystemCPUs", k + "reservedMemory",
			k + "qosReserved", k + "enforceNodeAllocatable", k + "kubeReservedCgroup", k + "systemReservedCgroup",
			k + "cgroupDriver", k + "cgroupRoot", k + "cgroupsPerQOS", k + "kubeletCgroups", k + "systemCgroups",
			k + "cpuCFSQuota", k + "cpuCFSQuotaPeriod", k + "cpuManagerPolicy", k + "cpuManagerPolicyOptions",
			k + "cpuManagerReconcilePeriod", k + "memoryManagerPolicy", k + "memoryThrottlingFactor",
			k + "topologyManagerPolicy", k + "topologyManagerPolicyOptions", k + "topologyManagerScope",
			k + "singleProcessOOMKill", k + "oomScoreAdj", k + "failSwapOn", k + "memorySwap.swapBehavior",
			k + "failCgroupV1", k + "localStorageCapacityIsolation", k + "kernelMemcgNotification",
			k + "evictionHard", k + "evictionSoft", k + "evictionSoftGracePeriod", k + "evictionMinimumReclaim",
			k + "evictionMaxPodGracePeriod", k + "evictionPressureTransitionPeriod",
			k + "imageGCHighThresholdPercent", k + "imageGCLowThresholdPercent", k + "imageMinimumGCAge", k + "imageMaximumGCAge",
			k + "serializeImagePulls", k + "maxParallelImagePulls", k + "registryPullQPS", k + "registryBurst",
			k + "eventRecordQPS", k + "eventBurst", k + "contentType",
			k + "containerLogMaxSize", k + "containerLogMaxFiles", k + "containerLogMaxWorkers", k + "containerLogMonitorInterval",
			k + "logging.format", k + "logging.flushFrequency", k + "logging.verbosity", k + "logging.vmodule",
			k + "logging.options.json.infoBufferSize", k + "logging.options.json.splitStream",
			k + "logging.options.text.infoBufferSize", k + "logging.options.text.splitStream",
			k + "syncFrequency", k + "fileCheckFrequency", k + "runtimeRequestTimeout", k + "streamingConnectionIdleTimeout",
			k + "nodeStatusUpdateFrequency", k + "nodeStatusReportFrequency", k + "nodeStatusMaxImages", k + "nodeLeaseDurationSeconds",
			k + "volumeStatsAggPeriod", k + "configMapAndSecretChangeDetectionStrategy", k + "crashLoopBackOff.maxContainerRestartPeriod",
			k + "shutdownGracePeriod", k + "shutdownGracePeriodCriticalPods", k + "shutdownGracePeriodByPodPriority",
			k + "clusterDNS", k + "clusterDomain", k + "podCIDR", k + "hairpinMode", k + "registerWithTaints",
			k + "enableControllerAttachDetach", k + "makeIPTablesUtilChains", k + "iptablesMasqueradeBit", k + "iptablesDropBit",
			k + "showHiddenMetricsForVersion",
		},
		Endpoint: {
			k + "containerRuntimeEndpoint", k + "imageServiceEndpoint",
			h + "httpServer", h + "websocket.server", h + "websocket.enable", h + "quic.server", h + "quic.enable",
			s + "server", b + "mqttServerExternal", e + "nodeIP", e + "customInterfaceName",
		},
		Listener: {
			k + "address", k + "readOnlyPort",
			ms + "enable", ms + "server", ms + "dummyServer",
			"modules.serviceBus.server", "modules.serviceBus.port",
			b + "mqttServerInternal", b + "mqttMode", "modules.deviceTwin.dmiSockPath",
		},
		Credentials: {
			h + "tlsCaFile", h + "tlsCertFile", h + "tlsPrivateKeyFile", h + "rotateCertificates",
			s + "tlsTunnelCAFile", s + "tlsTunnelCertFile", s + "tlsTunnelPrivateKeyFile",
			b + "eventBusTLS.enable", b + "eventBusTLS.tlsMqttCAFile", b + "eventBusTLS.tlsMqttCertFile", b + "eventBusTLS.tlsMqttPrivateKeyFile",
			ms + "tlsCaFile", ms + "tlsCertFile", ms + "tlsPrivateKeyFile",
		},
		Path: {
			"database.dataSource", e + "rootDirectory", e + "experimentalMounterPath",
			k + "staticPodPath", k + "podLogsDir", k + "volumePluginDir", k + "resolvConf",
		},
		Module: {
			"modules.dbTest.enable", "modules.deviceTwin.enable", h + "enable", s + "enable", e + "enable",
			b + "enable", mm + "enable", "modules.serviceBus.enable", "modules.taskManager.enable",
		},
		FeatureGate: {"featureGates", k + "featureGates"},
		Protection: {
			k + "enableDebuggingHandlers", k + "enableContentionProfiling", k + "enableProfilingHandler",
			k + "enableDebugFlagsHandler", k + "enableSystemLogHandler", k + "enableSystemLogQuery",
			k + "allowedUnsafeSysctls", k + "protectKernelDefaults", k + "seccompDefault", e + "seccompDefault",
			e + "windowsService",
			ms + "serviceAccountIssuers", ms + "apiAudiences", ms + "serviceAccountKeyFiles",
		},
		Secret:   {h + "token", b + "mqttUsername", b + "mqttPassword"},
		Identity: {e + "hostnameOverride", e + "registerNodeNamespace", k + "registerNode"},
		Code:     {e + "podSandboxImage"},
		Internal: {
			"apiVersion", "kind", "edgecoreVersion", "database.driverName", "database.aliasName",
			mm + "contextSendGroup", mm + "contextSendModule",
		},
	}
	notes := map[string]string{
		h + "token":                      "the join token is a secret and is never taken from a job; the node's certificates are renewed without it",
		e + "hostnameOverride":           "a new node name makes this host another node: join it again under that name instead",
		e + "registerNodeNamespace":      "the namespace an ImagePrePullJob's pull secret may come from (see imagePrePullJob.pullSecretNamespaces); who the node is in the cluster",
		k + "registerNode":               "whether the node registers itself: who the node is in the cluster",
		e + "windowsService":             "edgecore is the Windows service; the kubelet must not install itself as one",
		ms + "serviceAccountKeyFiles":    "the keys the metaServer checks pods' tokens with (files read as SYSTEM): whom the node's API trusts",
		k + "resolvConf":                 "a file the kubelet reads for every pod's DNS; Windows has none",
		e + "experimentalMounterPath":    "a program the kubelet runs as SYSTEM to mount volumes",
		k + "volumePluginDir":            "the folder of flexvolume drivers, programs the kubelet runs as SYSTEM",
		"modules.deviceTwin.dmiSockPath": "the pipe or socket mappers reach the node's device twins on (served with an administrators-only descriptor)",
	}
	out := map[string]Classified{}
	for class, paths := range byClass {
		for _, p := range paths {
			if _, dup := out[p]; dup {
				panic("jobpolicy: " + p + " is classified twice")
			}
			out[p] = Classified{Path: p, Class: class, Note: notes[p], Never: p == h+"token" || p == e+"hostnameOverride"}
		}
	}
	for _, f := range config.SettableFields() {
		if c, ok := out[f.Path]; ok {
			c.Map = f.Map
			out[f.Path] = c
		}
	}
	return out
}()

// Classification is the whole table, in the order of the paths: what the
// documentation lists.
func Classification() []Classified {
	out := make([]Classified, 0, len(classes))
	for _, c := range classes {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Classify finds the entry of the table a setting's path names: the field
// itself, or the mapping whose entry it names (nodeLabels.line). ok is
// false for a path the table does not hold.
func Classify(path string) (Classified, bool) {
	if c, ok := classes[path]; ok {
		return c, true
	}
	for p := path; ; {
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			return Classified{}, false
		}
		p = p[:i]
		if c, ok := classes[p]; ok && c.Map {
			return c, true
		}
	}
}

// classOrder is the order the documentation lists the classes in.
var classOrder = []Class{Tunable, Endpoint, Listener, Credentials, Path, Module, FeatureGate, Protection, Secret, Identity, Code, Internal}

// DocsTable is the classification as docs/cloud-jobs.md shows it, between
// its markers: the classes with their reasons, then a row a field.
func DocsTable() string {
	var b strings.Builder
	b.WriteString("| class | why a job may not change it |\n|---|---|\n")
	for _, c := range classOrder {
		if c == Tunable {
			fmt.Fprintf(&b, "| %s | (a job may change it) how the node runs its workloads |\n", c)
			continue
		}
		fmt.Fprintf(&b, "| %s | %s |\n", c, c.Why())
	}
	b.WriteString("\n| field | class | a ConfigUpdateJob may change it |\n|---|---|---|\n")
	for _, c := range Classification() {
		may := "yes"
		switch {
		case c.Never:
			may = "never"
		case c.Class != Tunable:
			may = "only if `cloud-jobs.yaml` names it"
		}
		class := string(c.Class)
		if c.Note != "" {
			class += ": " + c.Note
		}
		name := "`" + c.Path + "`"
		if c.Map {
			name += " (or one entry, `" + c.Path + ".<key>`)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", name, class, may)
	}
	return b.String()
}
