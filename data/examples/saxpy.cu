// saxpy.cu: the user kernel of user-module.json: y = a * x + y.
extern "C" __global__ void
saxpy (int n, float a, const float *__restrict__ x, float *__restrict__ y)
{
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    y[i] = a * x[i] + y[i];
}
