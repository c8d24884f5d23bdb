package config

import (
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2/validation"
)

// validateAll runs every check a configuration must pass before edgecore
// starts with it: sections present, the rules of goos, and upstream's module
// checks.
func validateAll(c *v1alpha2.EdgeCoreConfig, goos string) field.ErrorList {
	if errs := requireSections(c); len(errs) > 0 {
		// Upstream's checks dereference every section; stop here rather
		// than let a "null" in the file crash them.
		return errs
	}
	errs := Validate(c, goos)
	errs = append(errs, validateEdged(c.Modules.Edged, goos)...)
	errs = append(errs, validateNetwork(c)...)
	errs = append(errs, validateMetaServer(c)...)
	errs = append(errs, validateKubeletServer(c, goos)...)
	errs = append(errs, validateServices(c)...)
	errs = append(errs, validation.ValidateDataBase(*c.DataBase)...)
	errs = append(errs, validation.ValidateModuleEdgeHub(*c.Modules.EdgeHub)...)
	errs = append(errs, validation.ValidateModuleEventBus(*c.Modules.EventBus)...)
	errs = append(errs, validation.ValidateModuleMetaManager(*c.Modules.MetaManager)...)
	errs = append(errs, validation.ValidateModuleServiceBus(*c.Modules.ServiceBus)...)
	errs = append(errs, validation.ValidateModuleDeviceTwin(*c.Modules.DeviceTwin)...)
	errs = append(errs, validation.ValidateModuleDBTest(*c.Modules.DBTest)...)
	errs = append(errs, validation.ValidateModuleEdgeStream(*c.Modules.EdgeStream)...)
	return errs
}

func requireSections(c *v1alpha2.EdgeCoreConfig) field.ErrorList {
	var errs field.ErrorList
	need := func(present bool, path string) {
		if !present {
			errs = append(errs, field.Required(field.NewPath(path), "the section is empty or null: remove the line to use the defaults, or fill it in"))
		}
	}
	need(c.DataBase != nil, "database")
	need(c.Modules != nil, "modules")
	if m := c.Modules; m != nil {
		need(m.Edged != nil, "modules.edged")
		need(m.EdgeHub != nil, "modules.edgeHub")
		need(m.EventBus != nil, "modules.eventBus")
		need(m.MetaManager != nil, "modules.metaManager")
		need(m.ServiceBus != nil, "modules.serviceBus")
		need(m.DeviceTwin != nil, "modules.deviceTwin")
		need(m.DBTest != nil, "modules.dbTest")
		need(m.EdgeStream != nil, "modules.edgeStream")
		if m.Edged != nil && m.Edged.Enable {
			need(m.Edged.TailoredKubeletConfig != nil, "modules.edged.tailoredKubeletConfig")
		}
		if m.EdgeHub != nil && m.EdgeHub.Enable {
			need(m.EdgeHub.WebSocket != nil, "modules.edgeHub.websocket")
			need(m.EdgeHub.Quic != nil, "modules.edgeHub.quic")
		}
	}
	return errs
}

// validateEdged checks the node name, and the cgroup driver where cgroups
// exist. Upstream checks the cgroup driver by the OS edgecore was compiled
// for, which would refuse a Windows configuration checked on Linux.
func validateEdged(e *v1alpha2.Edged, goos string) field.ErrorList {
	if !e.Enable {
		return nil
	}
	var errs field.ErrorList
	name := e.HostnameOverride
	if msgs := apivalidation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		errs = append(errs, field.Invalid(field.NewPath("modules", "edged", "hostnameOverride"), name,
			strings.Join(msgs, "; ")+"; node names are lowercase, for example "+NodeName(name)))
	}
	if goos != Windows {
		if err := validation.ValidateCgroupDriver(e.TailoredKubeletConfig.CgroupDriver); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
