// _Send and _Recv: the two ends of an edge that crosses devices. Partitioning
// inserts one pair per tensor per destination device.
#include "weir/framework/op_def.h"
#include "weir/ops/all_ops.h"

namespace weir {

void RegisterSendRecvOps(OpRegistry* registry) {
  registry->Register(OpDefBuilder("_Send")
                         .Input("tensor: T")
                         .Attr("T: type")
                         .Attr("tensor_name: string")
                         .Attr("send_device: string")
                         .Attr("send_device_incarnation: int")
                         .Attr("recv_device: string")
                         .Attr("client_terminated: bool = false")
                         .SetIsStateful()
                         .Doc("Sends `tensor` from send_device to recv_device."));
  registry->Register(OpDefBuilder("_Recv")
                         .Output("tensor: tensor_type")
                         .Attr("tensor_type: type")
                         .Attr("tensor_name: string")
                         .Attr("send_device: string")
                         .Attr("send_device_incarnation: int")
                         .Attr("recv_device: string")
                         .Attr("client_terminated: bool = false")
                         .SetIsStateful()
                         .Doc("Receives the tensor sent by the matching _Send."));
}

}  // namespace weir
