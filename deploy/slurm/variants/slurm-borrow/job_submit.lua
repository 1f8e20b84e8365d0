--[[ job_submit.lua of the slurm-borrow variant (JobSubmitPlugins=lua reads it from slurm.conf's directory).

Soft quotas the way a site routes borrowed capacity: a job goes to QOS 'normal' while its account's GPUs
in 'normal' (running or pending, this job included) stay within the account's quota, and to QOS
'borrow' beyond it. 'borrow' has priority 0 and is preempted by requeue when a 'normal' job needs its GPUs
(PreemptType=preempt/qos; QOS made by deploy/slurm/accounting.sh). Quotas come from /etc/slurm-ds/quotas
("account gpus" lines, written by 'accounting.sh tenants'); an account without a quota keeps its jobs
in 'normal'. A job that names its QOS (--qos) is left alone. The decision is taken at submit time only:
a job routed to 'borrow' stays there when its account falls under quota later. ]]

local QUOTAS = "/etc/slurm-ds/quotas"

local function read_quotas()
   local q = {}
   local f = io.open(QUOTAS, "r")
   if not f then return q end
   for line in f:lines() do
      local a, n = string.match(line, "^%s*(%S+)%s+(%d+)")
      if a then q[string.lower(a)] = tonumber(n) end
   end
   f:close()
   return q
end

-- GPUs a job description asks: --gres=gpu[:type]:N (per node, times the node count) or --gpus=N
local function desc_gpus(d)
   local n = 0
   local per_node = d.tres_per_node
   if per_node then
      local c = string.match(per_node, "gpu:[%w_]*:?(%d+)")
      -- min_nodes is NO_VAL (a huge number) when the job did not ask for a node count
      local nodes = tonumber(d.min_nodes) or 1
      if nodes < 1 or nodes > 100000 then nodes = 1 end
      if c then n = tonumber(c) * nodes end
   end
   local per_job = d.tres_per_job
   if n == 0 and per_job then
      local c = string.match(per_job, "gpu:[%w_]*:?(%d+)")
      if c then n = tonumber(c) end
   end
   return n
end

-- GPUs of an account's jobs in QOS 'normal' that are pending, running or suspended
local function normal_gpus(account)
   local used = 0
   for _, job in pairs(slurm.jobs or {}) do
      local st = (job.job_state or 0) % 256   -- the base state: 0 pending, 1 running, 2 suspended
      if st <= 2 and job.account == account and job.qos == "normal" then
         local c = string.match(job.tres_fmt_req_str or "", "gres/gpu=(%d+)")
         used = used + (tonumber(c) or 0)
      end
   end
   return used
end

function slurm_job_submit(job_desc, part_list, submit_uid)
   if job_desc.qos ~= nil then return slurm.SUCCESS end
   local account = job_desc.account and string.lower(job_desc.account)
   if account == nil then return slurm.SUCCESS end
   local quota = read_quotas()[account]
   if quota == nil then return slurm.SUCCESS end
   local want = desc_gpus(job_desc)
   local used = normal_gpus(account)
   if used + want > quota then
      job_desc.qos = "borrow"
      slurm.log_info("job_submit/lua: account %s holds %d of its %d GPUs in normal: %d more go to borrow",
                     account, used, quota, want)
   end
   return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
   return slurm.SUCCESS
end

slurm.log_info("job_submit/lua: slurm-borrow routing loaded")
return slurm.SUCCESS
