/* SPDX-License-Identifier: MIT */
/* Raw OpenCL only, no clmem, no FFmpeg. Results and what they mean:
 * docs/driver-notes.md, "FFmpeg's OpenCL filters on optimal-tiling images
 * imported from Vulkan".
 * Build and run:
 *   cc -O1 -o /tmp/oob docs/probes/oob-image-probe.c -lOpenCL && /tmp/oob */
/* Does an out-of-bounds write_imagef fail the context on this driver?
 * An image of 112x72 RGBA8 (CL_UNORM_INT8,
 * as pad_opencl's output plane), a kernel that writes every work-item's
 * pixel with no bound check over 112x80 (the size rounded up to 16, as
 * ff_opencl_filter_work_size_from_image does), then an in-bounds kernel
 * and a read of the image: each call's status printed. First a control
 * run: the same kernel over exactly 112x72. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *src =
    "__kernel void fill(__write_only image2d_t dst) {\n"
    "  int2 p = (int2)(get_global_id(0), get_global_id(1));\n"
    "  write_imagef(dst, p, (float4)(0.25f, 0.5f, 0.75f, 1.0f));\n"
    "}\n";

static int run(cl_context ctx, cl_device_id dev, cl_kernel k, size_t gw, size_t gh, const char *what)
{
    cl_int e;
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &e);
    cl_image_format f = {CL_RGBA, CL_UNORM_INT8};
    cl_image_desc d;
    memset(&d, 0, sizeof d);
    d.image_type = CL_MEM_OBJECT_IMAGE2D;
    d.image_width = 112;
    d.image_height = 72;
    cl_mem img = clCreateImage(ctx, CL_MEM_READ_WRITE, &f, &d, NULL, &e);
    printf("%s: clCreateImage %d\n", what, e);
    e = clSetKernelArg(k, 0, sizeof img, &img);
    size_t g[2] = {gw, gh}, l[2] = {16, 16};
    e = clEnqueueNDRangeKernel(q, k, 2, NULL, g, (gw % 16 || gh % 16) ? NULL : l, 0, NULL, NULL);
    printf("%s: enqueue %zux%zu -> %d\n", what, gw, gh, e);
    e = clFinish(q);
    printf("%s: clFinish -> %d\n", what, e);
    size_t g2[2] = {112, 72};
    e = clEnqueueNDRangeKernel(q, k, 2, NULL, g2, NULL, 0, NULL, NULL);
    printf("%s: in-bounds enqueue after -> %d\n", what, e);
    unsigned char *px = malloc(112 * 72 * 4);
    size_t o[3] = {0, 0, 0}, r[3] = {112, 72, 1};
    e = clEnqueueReadImage(q, img, CL_TRUE, o, r, 0, 0, px, 0, NULL, NULL);
    printf("%s: clEnqueueReadImage -> %d, px0 = %u %u %u %u\n", what, e, px[0], px[1], px[2], px[3]);
    free(px);
    clReleaseMemObject(img);
    clReleaseCommandQueue(q);
    return e;
}

int main(void)
{
    cl_platform_id plats[8];
    cl_uint np = 0;
    clGetPlatformIDs(8, plats, &np);
    for (cl_uint i = 0; i < np; i++) {
        char name[256];
        cl_device_id dev;
        clGetPlatformInfo(plats[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_GPU, 1, &dev, NULL) != CL_SUCCESS)
            continue;
        char dname[256], ver[256];
        clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof dname, dname, NULL);
        clGetDeviceInfo(dev, CL_DRIVER_VERSION, sizeof ver, ver, NULL);
        printf("platform %s, device %s, driver %s\n", name, dname, ver);
        cl_int e;
        cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
        cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &e);
        e = clBuildProgram(p, 1, &dev, "", NULL, NULL);
        cl_kernel k = clCreateKernel(p, "fill", &e);
        run(ctx, dev, k, 112, 72, "control (112x72)");
        run(ctx, dev, k, 112, 80, "out of bounds (112x80)");
        run(ctx, dev, k, 112, 72, "control again, same context");
        clReleaseKernel(k);
        clReleaseProgram(p);
        clReleaseContext(ctx);
        return 0;
    }
    printf("no GPU OpenCL device\n");
    return 1;
}
