/* SPDX-License-Identifier: MIT */
/* ffmpeg-example: an OpenCL kernel on FFmpeg's Vulkan frames, no copy.
 *
 * Software NV12 frames of 1920x1080 are uploaded into a Vulkan frames pool
 * with FFmpeg's own calls; libclmem-av imports each frame's planes into
 * OpenCL, where a kernel brightens the luma in place, row by row through
 * the plane handle's row pitch; av_hwframe_transfer_data downloads the
 * frame, and every byte is checked against the same change made on the
 * CPU. Prints the path the planes took (opaque fd on a GPU, host-mapped on
 * a CPU OpenCL device) and the order the handoffs ran in (one frame at a
 * time: host order, the faster then).
 *
 * Build (installed): cc ffmpeg-example.c $(pkg-config --cflags --libs clmem-av) */
#include <clmem-av.h>

#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WIDTH 1920
#define HEIGHT 1080
#define FRAMES 3

static const char *source =
    "__kernel void brighten(__global uchar *luma, uint pitch) {\n"
    "    size_t x = get_global_id(0), y = get_global_id(1);\n"
    "    __global uchar *p = luma + y * pitch + x;\n"
    "    *p = (uchar)min(255, *p + 40);\n"
    "}\n";

/* The library's sentence names the call that failed and why. */
static int fail(void)
{
    fprintf(stderr, "ffmpeg-example: %s\n", clmem_error_message());
    return 1;
}

int main(void)
{
    AVBufferRef *device_ref = NULL, *frames_ref;
    AVHWFramesContext *frames;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    cl_program program;
    cl_kernel kernel;
    clmem_bridge *bridge;
    clmem_av_sync *sync;
    clmem_bridge_path path = CLMEM_BRIDGE_PATH_BEST;
    long bad = 0;
    cl_int err;

    if (av_hwdevice_ctx_create(&device_ref, AV_HWDEVICE_TYPE_VULKAN, NULL, NULL, 0) < 0) {
        fprintf(stderr, "ffmpeg-example: FFmpeg cannot make a Vulkan device here\n");
        return 1;
    }
    /* The bridge on FFmpeg's VkDevice, in an OpenCL context of its own: on
     * the device with the Vulkan device's UUID (a GPU's own driver), or the
     * only OpenCL device where none says its UUID (PoCL, host-mapped). */
    if (clmem_av_bridge_create(device_ref, NULL, 0, &bridge) != CLMEM_OK)
        return fail();
    context = clmem_bridge_context(bridge);
    device = clmem_bridge_cl_device(bridge);
    queue = clCreateCommandQueueWithProperties(context, device, NULL, &err);
    program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
    if (clBuildProgram(program, 1, &device, "", NULL, NULL) != CL_SUCCESS)
        return fprintf(stderr, "ffmpeg-example: the kernel did not build\n"), 1;
    kernel = clCreateKernel(program, "brighten", &err);
    /* The handoffs' order: one frame at a time, BEST takes host order. */
    if (clmem_av_sync_create(bridge, device_ref, CLMEM_AV_ORDER_BEST, 1, &sync) != CLMEM_OK)
        return fail();

    /* A pool whose frames OpenCL reads. */
    frames_ref = av_hwframe_ctx_alloc(device_ref);
    frames = (AVHWFramesContext *)frames_ref->data;
    frames->format = AV_PIX_FMT_VULKAN;
    frames->sw_format = AV_PIX_FMT_NV12;
    frames->width = WIDTH;
    frames->height = HEIGHT;
    if (clmem_av_frames_setup(frames_ref) != CLMEM_OK)
        return fail();
    if (av_hwframe_ctx_init(frames_ref) < 0)
        return fprintf(stderr, "ffmpeg-example: av_hwframe_ctx_init failed\n"), 1;

    for (int n = 0; n < FRAMES; n++) {
        AVFrame *sw = av_frame_alloc(), *hw = av_frame_alloc(), *back = av_frame_alloc();
        clmem_av_frame_planes planes;
        size_t global[2] = {WIDTH, HEIGHT};
        cl_mem luma;
        cl_uint pitch;

        sw->format = back->format = AV_PIX_FMT_NV12;
        sw->width = back->width = WIDTH;
        sw->height = back->height = HEIGHT;
        av_frame_get_buffer(sw, 0);
        av_frame_get_buffer(back, 0);
        for (int y = 0; y < HEIGHT; y++)
            for (int x = 0; x < WIDTH; x++)
                sw->data[0][y * sw->linesize[0] + x] = (uint8_t)(x + y * 3 + n * 50);
        for (int y = 0; y < HEIGHT / 2; y++)
            memset(sw->data[1] + y * sw->linesize[1], 128 + y % 16, WIDTH);
        if (av_hwframe_get_buffer(frames_ref, hw, 0) < 0 || av_hwframe_transfer_data(hw, sw, 0) < 0)
            return fprintf(stderr, "ffmpeg-example: upload failed\n"), 1;

        /* Plane 0 (Y) is a buffer whose rows are row_pitch bytes apart. */
        if (clmem_av_frame_import(bridge, hw, CLMEM_BRIDGE_PATH_BEST, queue, CL_MEM_READ_WRITE, &planes) !=
            CLMEM_OK)
            return fail();
        clmem_bridge_handle_path(planes.planes[0], &path);
        luma = clmem_handle_mem(planes.planes[0]);
        pitch = clmem_handle_row_pitch(planes.planes[0]);
        if (clmem_av_sync_acquire(sync, hw, &planes, queue, UINT64_MAX, NULL) != CLMEM_OK)
            return fail();
        clSetKernelArg(kernel, 0, sizeof luma, &luma);
        clSetKernelArg(kernel, 1, sizeof pitch, &pitch);
        clEnqueueNDRangeKernel(queue, kernel, 2, NULL, global, NULL, 0, NULL, NULL);
        if (clmem_av_sync_release(sync, hw, &planes, queue, 0, NULL) != CLMEM_OK)
            return fail();
        if (n == 0)
            printf("frame planes through the %s path, %s order: Y row pitch %u, CbCr row pitch %u\n",
                   clmem_bridge_path_name(path), clmem_av_order_name(clmem_av_sync_get_order(sync)), pitch,
                   clmem_handle_row_pitch(planes.planes[1]));

        /* FFmpeg's download waits for OpenCL's release (its semaphores). */
        clmem_av_frame_planes_unref(&planes);
        if (av_hwframe_transfer_data(back, hw, 0) < 0)
            return fprintf(stderr, "ffmpeg-example: download failed\n"), 1;
        for (int y = 0; y < HEIGHT; y++)
            for (int x = 0; x < WIDTH; x++) {
                int want = sw->data[0][y * sw->linesize[0] + x] + 40;
                bad += back->data[0][y * back->linesize[0] + x] != (want > 255 ? 255 : want);
            }
        for (int y = 0; y < HEIGHT / 2; y++)
            bad += memcmp(back->data[1] + y * back->linesize[1], sw->data[1] + y * sw->linesize[1], WIDTH) != 0;
        av_frame_free(&sw);
        av_frame_free(&hw);
        av_frame_free(&back);
    }
    if (bad)
        printf("%ld bytes or rows differ from the CPU's\n", bad);
    else
        printf("%d NV12 %dx%d frames brightened by OpenCL in place match the CPU\n", FRAMES, WIDTH, HEIGHT);

    /* The end: the sync object's and the imports' work done, then the
     * bridge, then FFmpeg's device last (the bridge borrows its VkDevice). */
    if (clmem_av_sync_finish(sync, 10000000000ull) != CLMEM_OK)
        return fail();
    clmem_av_sync_unref(sync);
    /* Before the VkDevice goes (with device_ref's last reference): wait
     * until the library holds nothing of it. */
    {
        const AVVulkanDeviceContext *vk = ((AVHWDeviceContext *)device_ref->data)->hwctx;
        if (clmem_bridge_device_finish(vk->act_dev, 10000000000ull) != CLMEM_OK)
            return fail();
    }
    av_buffer_unref(&frames_ref);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clmem_bridge_unref(bridge); /* releases its OpenCL context */
    av_buffer_unref(&device_ref);
    return bad != 0;
}
