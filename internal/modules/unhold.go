package modules

import (
	beehiveContext "github.com/kubeedge/beehive/pkg/core/context"
	"github.com/kubeedge/beehive/pkg/core/model"
	"github.com/kubeedge/kubeedge/edge/pkg/common/modules"
)

// unholdMessage is the message upstream's metaserver sends edged for
// `keadm ctl unhold-upgrade`: edged passes the pod's held updates to the
// kubelet. The resource is "<namespace>/pod/<name>".
func unholdMessage(namespace, name string) *model.Message {
	return model.NewMessage("").
		BuildRouter(modules.MetaManagerModuleName, "", namespace+"/"+model.ResourceTypePod+"/"+name, model.UnholdUpgradeOperation)
}

// releaseHeldPod hands a pod an administrator released on the node
// (`edgecore.exe upgrade unhold`) to edged.
func releaseHeldPod(namespace, name string) {
	beehiveContext.Send(modules.EdgedModuleName, *unholdMessage(namespace, name))
}
